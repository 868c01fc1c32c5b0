"""plugins/module_utils/traffic/request.py: what a traffic request must hold, and its defaults by backend."""

from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError
from ansible_collections.lcm.openstack.plugins.module_utils.phase.spec import PhaseRequest, Source
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.check import Check
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.request import TrafficRequest


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
    with pytest.raises(InputError) as err:
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
    # No object named: the one the release renders (traffic/release_target.py)
    _req(track="x"),
    _req(backend="ingress_canary", canary_service="c"),
    _req("drain", backend="openshift_route"),
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
