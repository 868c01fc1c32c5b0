# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The opener of a traffic check's URL (traffic/check.py), made from
Ansible's URL helpers: the same certificate verification, CA bundle
(`ca_path`), client certificate and proxy handling from the environment
(`https_proxy`, `http_proxy`, `no_proxy`) as ansible.builtin.uri, rather
than a TLS and proxy stack of our own."""

from __future__ import annotations

import urllib.error
import urllib.parse

from ansible.module_utils.urls import ConnectionError as UrlConnectionError
from ansible.module_utils.urls import Request

from ansible_collections.lcm.openstack.plugins.module_utils.traffic.check import Check, Opener


def url_opener(check: Check) -> Opener:
    """GET a URL with the check's options; the status, whatever it is."""
    def get(url: str, timeout: float) -> int:
        request = Request(
            use_proxy=check.use_proxy, validate_certs=check.validate_certs, ca_path=check.ca_path,
            client_cert=check.client_cert, client_key=check.client_key, timeout=timeout,
            # The probe checks what the service answers: a redirect is its answer.
            follow_redirects="none",
            # Credentials from the URL's userinfo only (Request takes them out of
            # the URL), sent up front as the GET always did, never from ~/.netrc.
            force_basic_auth="@" in urllib.parse.urlsplit(url).netloc, use_netrc=False,
            http_agent="lcm.openstack-traffic-check")
        try:
            with request.open("GET", url) as response:
                return int(response.status)
        except urllib.error.HTTPError as exc:  # urllib raises every status it does not follow
            status = int(exc.code)
            exc.close()
            return status
        except UrlConnectionError as exc:  # Ansible's own (certificate, proxy): not an OSError
            raise OSError(str(exc)) from None
    return get
