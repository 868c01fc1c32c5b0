"""plugins/module_utils/traffic/check.py: what a check between weight steps
says of itself (never a password), and the HTTP probe against a real server."""

from __future__ import annotations

import http.server
import threading
from typing import Any, Iterator

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.phase.spec import PhaseRequest, Source
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.check import Check, http_check, masked_url


def _test_phase(**source: Any) -> PhaseRequest:
    return PhaseRequest(type="test", service="keystone", release="keystone", namespace="openstack",
                        source=Source(**source))


def test_check_summaries_never_carry_a_password() -> None:
    assert Check(url="https://admin:s3cr3t-pw@keystone.example.com/v3", expect_status=300).summary == \
        "GET https://admin:********@keystone.example.com/v3 expects 300"
    assert Check(test=_test_phase(chart="/srv/charts/keystone")).summary == "test phase from /srv/charts/keystone"
    assert Check(test=_test_phase(manifests=[{}, {}])).summary == "test phase from 2 manifest(s)"
    assert masked_url("http://k:5000/v3") == "http://k:5000/v3"
    assert masked_url("http://user@k/") == "http://user@k/"


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """127.0.0.1: /ok answers 200, /broken 500, /moved redirects to /ok."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            if self.path == "/moved":
                self.send_response(302)
                self.send_header("Location", "/ok")
            else:
                self.send_response(200 if self.path == "/ok" else 500)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_args: Any) -> None:
            pass
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_http_check(server: str) -> None:
    assert http_check(f"{server}/ok", 200, 5) is None
    # redirects are not followed: the probe checks what the service answers
    assert http_check(f"{server}/moved", 302, 5) is None
    assert http_check(f"{server}/moved", 200, 5) == f"GET {server}/moved returned 302, expected 200"
    assert http_check(f"{server}/broken", 200, 5) == f"GET {server}/broken returned 500, expected 200"
    assert http_check(f"{server}/broken", 500, 5) is None
    assert http_check(f"{server}/ok", 204, 5) == f"GET {server}/ok returned 200, expected 204"


def test_http_check_that_cannot_connect(server: str) -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    reason = http_check(f"http://127.0.0.1:{port}/", 200, 5)
    assert reason is not None and reason.startswith(f"GET http://127.0.0.1:{port}/ failed: ")
    assert "refused" in reason.lower()
