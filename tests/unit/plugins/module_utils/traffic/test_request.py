"""plugins/module_utils/traffic/request.py: the request, its checks, and the Phase a traffic shift is recorded as."""

from __future__ import annotations

import http.server
import re
import threading
from typing import Any, Dict, Iterator

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.phase.spec import PhaseRequest, Source
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.check import Check, http_check, masked_url
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.request import TrafficRequest
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.runner import check_phase_name, step_label

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def _req(action: str = "rollout", backend: str = "service_selector", **kw: Any) -> TrafficRequest:
    return TrafficRequest(action=action, service="keystone", release="keystone", namespace="openstack",
                          backend=backend, **kw)


def _test_phase(**source: Any) -> PhaseRequest:
    return PhaseRequest(type="test", service="keystone", release="keystone", namespace="openstack",
                        source=Source(**source))


# -- validate -------------------------------------------------------------------------------

@pytest.mark.parametrize("req, message", [
    (_req("restart", selector_service="k", track="x"), "unknown action 'restart'; use drain or rollout"),
    (_req(backend="istio"), "unknown backend 'istio'"),
    (_req(track="x"), "selector_service is required with backend service_selector"),
    (_req(backend="ingress_canary", canary_service="c"), "ingress is required with backend ingress_canary"),
    (_req(backend="openshift_route", canary_service="c"), "route is required with backend openshift_route"),
    (_req(selector_service="k", selector_mode="track"), "track is required to roll out with backend service_selector"),
    (_req(selector_service="k", selector_mode="canary"), "unknown selector_mode 'canary'; use gate or track"),
    (_req("drain", selector_service="k", fallback_track="blue"), "fallback_track applies to selector_mode track"),
    (_req(selector_service="k", track="x", min_ready=-1), "min_ready must not be negative"),
    (_req(selector_service="k", track="x", timeout=0), "timeout must be at least 1"),
    (_req("drain", selector_service="k", drain_grace_seconds=-5), "drain_grace_seconds must not be negative"),
    (_req(selector_service="k", track="x", check=Check(url="http://k")), "check applies to the weight backends"),
    (_req(backend="ingress_canary", ingress="k"), "canary_service is required to roll out with backend ingress_canary"),
    (_req(backend="ingress_canary", ingress="k", canary_service="c", steps=[]), "steps must be increasing"),
    (_req(backend="ingress_canary", ingress="k", canary_service="c", steps=[50, 10]), "not [50, 10]"),
    (_req(backend="ingress_canary", ingress="k", canary_service="c", steps=[10, 10, 100]), "steps must be increasing"),
    (_req(backend="ingress_canary", ingress="k", canary_service="c", steps=[10, 150]), "between 0 and 100"),
    (_req(backend="ingress_canary", ingress="k", canary_service="c", pause_seconds=-1),
     "pause_seconds must not be negative"),
    (_req(backend="ingress_canary", ingress="k", canary_service="c", check=Check()),
     "check takes either url or test_phase"),
    (_req(backend="ingress_canary", ingress="k", canary_service="c",
          check=Check(url="http://k", test=_test_phase(manifests=[]))), "not both"),
    (_req(backend="ingress_canary", ingress="k", canary_service="c", check=Check(url="ftp://k/")),
     "check.url must be an http:// or https:// URL, not 'ftp://k/'"),
    (_req(backend="ingress_canary", ingress="k", canary_service="c", check=Check(url="http://k", expect_status=42)),
     "check.expect_status must be an HTTP status"),
    (_req(backend="ingress_canary", ingress="k", canary_service="c", check=Check(test=_test_phase())),
     "source.chart is required unless source.manifests gives the objects"),
])
def test_validate_refuses(req: TrafficRequest, message: str) -> None:
    with pytest.raises(PhaseError) as err:
        req.validate()
    assert message in str(err.value)


@pytest.mark.parametrize("req", [
    _req(selector_service="k", track="2025.2"),
    _req("drain", selector_service="k"),
    _req("drain", backend="ingress_canary", ingress="k"),  # drains the live canary
    _req("drain", backend="openshift_route", route="k"),
    _req(backend="openshift_route", route="k", canary_service="c", steps=[0, 100]),
    _req(backend="ingress_canary", ingress="k", canary_service="c",
         check=Check(test=_test_phase(manifests=[]), timeout=60)),
])
def test_validate_accepts(req: TrafficRequest) -> None:
    req.validate()


def test_defaults_by_backend() -> None:
    assert _req().grace == 0
    assert _req(backend="ingress_canary").grace == 30
    assert _req(backend="openshift_route").grace == 30
    assert _req(backend="openshift_route", drain_grace_seconds=0).grace == 0
    assert _req("drain").phase_type == "trafficdrain" and _req().phase_type == "trafficrollout"
    assert _req(selector_service="s").target == "s"
    assert _req(backend="ingress_canary", ingress="i", route="r").target == "i"
    assert list(_req().steps) == [10, 50, 100]


# -- checks -----------------------------------------------------------------------------------

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


def test_step_label() -> None:
    assert step_label(50, [10, 50, 100]) == "weight 50% (step 2/3)"
    assert step_label(100, [10, 50, 100]) == "weight 100% (step 3/3)"


def test_check_phase_names_fit_a_label_and_differ_per_step_and_parent() -> None:
    names: Dict[tuple, str] = {}
    for parent in ("keystone-trafficrollout-1a2b3c4d", "keystone-trafficrollout-5e6f7a8b"):
        for step in (1, 2, 3):
            names[(parent, step)] = check_phase_name("keystone", parent, step)
    assert len(set(names.values())) == 6
    assert all(n.startswith("keystone-test-") and DNS_LABEL.match(n) for n in names.values())
    long = check_phase_name("r" * 60, "p", 1)
    assert len(long) <= 63 and DNS_LABEL.match(long)


# -- the parameters Ansible echoes back ------------------------------------------------------

def test_the_echoed_parameters_mask_the_check_credentials_as_field_values() -> None:
    from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import MASK, Redactor
    from ansible_collections.lcm.openstack.plugins.module_utils.adapter.traffic import mask_params

    params = {"action": "rollout", "check": {
        "url": "http://admin:admin@keystone/v3",  # short and a word: not masked as free text, masked here
        "source": {"chart": "/srv/keystone", "values": {"endpoints": {"identity": {"auth": {"admin": {
            "username": "admin", "password": "password"}}}}}}}}
    mask_params(params, Redactor())
    assert params["check"]["url"] == "http://admin:********@keystone/v3"
    assert params["check"]["source"]["values"]["endpoints"]["identity"]["auth"]["admin"] == {
        "username": "admin", "password": MASK}
    assert params["check"]["source"]["chart"] == "/srv/keystone" and params["action"] == "rollout"
