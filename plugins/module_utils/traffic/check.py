# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The check a weight rollout runs after each step: an HTTP GET, or a test Phase."""

from __future__ import annotations

import base64
import http.client
import urllib.parse
from dataclasses import dataclass
from typing import Optional

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.phase.spec import PhaseRequest

URL_CHECK_TIMEOUT = 10


@dataclass
class Check:
    """What is checked after each weight step: an HTTP GET, or a test Phase."""

    url: Optional[str] = None
    expect_status: int = 200
    timeout: Optional[int] = None
    test: Optional[PhaseRequest] = None

    def validate(self) -> None:
        if (self.url is None) == (self.test is None):
            raise PhaseError("check takes either url or test_phase: true with source, not both and not neither")
        if self.url is not None and urllib.parse.urlsplit(self.url).scheme not in ("http", "https"):
            raise PhaseError(f"check.url must be an http:// or https:// URL, not {self.url!r}")
        if not 100 <= self.expect_status <= 599:
            raise PhaseError(f"check.expect_status must be an HTTP status (100-599), not {self.expect_status}")
        if self.test is not None:
            self.test.validate()

    @property
    def summary(self) -> str:
        if self.test is not None:
            src = self.test.source
            return f"test phase from {src.chart or f'{len(src.manifests or [])} manifest(s)'}"
        return f"GET {masked_url(self.url or '')} expects {self.expect_status}"


def http_check(url: str, expect_status: int, timeout: float) -> Optional[str]:
    """None when GET url answers expect_status, else why not.

    http.client rather than Ansible's open_url: this file stays free of Ansible
    imports, and the probe goes straight to the service (no proxy), with the
    default certificate verification for https."""
    parts = urllib.parse.urlsplit(url)
    conn_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        conn = conn_class(parts.hostname or "", parts.port, timeout=timeout)
        try:
            headers = {"Host": parts.netloc.rsplit("@", 1)[-1]}
            if parts.username is not None:
                token = base64.b64encode(f"{parts.username}:{parts.password or ''}".encode()).decode()
                headers["Authorization"] = f"Basic {token}"
            conn.request("GET", path, headers=headers)
            status = conn.getresponse().status
        finally:
            conn.close()
    except (OSError, ValueError, http.client.HTTPException) as exc:
        return f"GET {masked_url(url)} failed: {exc}"
    return None if status == expect_status else f"GET {masked_url(url)} returned {status}, expected {expect_status}"


def masked_url(url: str) -> str:
    """The URL without the password it may carry: it is written to the Phase's spec."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username}:********@{parts.netloc.rsplit('@', 1)[1]}"
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))
