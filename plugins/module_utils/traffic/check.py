# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The check a weight rollout runs after each step: an HTTP GET, or a test Phase."""

from __future__ import annotations

import http.client
import os
import urllib.parse
from dataclasses import dataclass, field
from typing import Callable, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError, PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.phase.spec import PhaseRequest

URL_CHECK_TIMEOUT = 10
# GET a URL and return the HTTP status it answered (a redirect not
# followed); raise OSError, ValueError or HTTPException when none came. The
# adapter makes it from Ansible's URL helpers (adapter/urls.py) with the
# check's TLS and proxy options; this package never imports Ansible.
Opener = Callable[[str, float], int]


@dataclass
class Check:
    """What is checked after each weight step: an HTTP GET, or a test Phase."""

    url: Optional[str] = None
    expect_status: int = 200
    timeout: Optional[int] = None
    test: Optional[PhaseRequest] = None
    validate_certs: bool = True
    ca_path: Optional[str] = None  # PEM bundle of the CAs an https URL's certificate may chain to
    client_cert: Optional[str] = None
    client_key: Optional[str] = None
    use_proxy: bool = True  # the proxy of the environment (https_proxy, http_proxy, no_proxy)
    opener: Optional[Opener] = field(default=None, repr=False, compare=False)

    def validate(self) -> None:
        if (self.url is None) == (self.test is None):
            raise InputError("check takes either url or test_phase: true with source, not both and not neither")
        if self.url is not None and urllib.parse.urlsplit(self.url).scheme not in ("http", "https"):
            raise InputError(f"check.url must be an http:// or https:// URL, not {self.url!r}")
        if not 100 <= self.expect_status <= 599:
            raise InputError(f"check.expect_status must be an HTTP status (100-599), not {self.expect_status}")
        for name in ("ca_path", "client_cert", "client_key"):
            path = getattr(self, name)
            if path is not None and not os.path.isfile(path):
                raise InputError(f"check.{name} {path} is not a readable file on the controller")
        if self.client_key is not None and self.client_cert is None:
            raise InputError("check.client_key goes with check.client_cert, which is missing")
        if self.test is not None:
            self.test.validate()

    @property
    def summary(self) -> str:
        if self.test is not None:
            src = self.test.source
            return f"test phase from {src.chart or f'{len(src.manifests or [])} manifest(s)'}"
        return f"GET {masked_url(self.url or '')} expects {self.expect_status}"


def http_check(url: str, expect_status: int, timeout: float, opener: Optional[Opener]) -> Optional[str]:
    """None when GET url answers expect_status, else why not; the URL's
    password, and any credential in what the opener raised, never shown."""
    if opener is None:
        raise PhaseError("internal error: the URL check has no opener")
    try:
        status = opener(url, timeout)
    except (OSError, ValueError, http.client.HTTPException) as exc:
        return f"GET {masked_url(url)} failed: {_scrubbed(str(exc), url)}"
    return None if status == expect_status else f"GET {masked_url(url)} returned {status}, expected {expect_status}"


def _scrubbed(text: str, url: str) -> str:
    """`text` with the URL's password masked wherever it shows (a library may quote the URL)."""
    password = urllib.parse.urlsplit(url).password
    text = text.replace(url, masked_url(url))
    for secret in filter(None, {password, urllib.parse.unquote(password or "")}):
        text = text.replace(secret, "********")
    return text


def masked_url(url: str) -> str:
    """The URL without the password it may carry: it is written to the Phase's spec."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username}:********@{parts.netloc.rsplit('@', 1)[1]}"
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))
