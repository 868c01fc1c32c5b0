"""plugins/module_utils/traffic/weights.py: the canary Ingress, Route weights, and what a run plans."""

from __future__ import annotations

import copy
from typing import Any, Dict, List, Optional

import pytest
import yaml
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import NotFoundError, ResourceNotFoundError

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import ObjectNotFound, PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.check import Check
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.request import TrafficRequest
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.weights import (
    IngressCanary, RouteWeights, canary_ingress, ingress_weight, port_ref, remaining, route_body, route_weight,
)
from support.paths import UNIT_FIXTURES

FIXTURES = UNIT_FIXTURES / "traffic"
INGRESS = yaml.safe_load((FIXTURES / "ingress.yaml").read_text())
ROUTES = yaml.safe_load((FIXTURES / "route.yaml").read_text())["cases"]
LABELS = {"lifecycle.openstack.org/service": "keystone", "app.kubernetes.io/managed-by": "lcm.openstack"}


def test_canary_ingress_copies_the_rules_onto_the_canary_service() -> None:
    body = canary_ingress(INGRESS["primary"], "keystone-canary", "keystone-api-green", None, 10, LABELS)
    assert body == INGRESS["canary_at_10"]
    # TLS stays with the primary, where nginx takes it from; the primary is untouched
    assert "tls" not in body["spec"]
    assert INGRESS["primary"]["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"] == "keystone-api"


@pytest.mark.parametrize("port, expect", [(8080, {"number": 8080}), ("8080", {"number": 8080}),
                                          ("http", {"name": "http"})])
def test_canary_port_replaces_every_path_port(port: Any, expect: Dict[str, Any]) -> None:
    body = canary_ingress(INGRESS["primary"], "keystone-canary", "green", port, 50, LABELS)
    ports = [p["backend"]["service"]["port"] for r in body["spec"]["rules"] for p in r["http"]["paths"]]
    assert ports == [expect] * 3
    assert body["metadata"]["annotations"]["nginx.ingress.kubernetes.io/canary-weight"] == "50"


def test_an_ingress_without_paths_has_nothing_to_copy() -> None:
    with pytest.raises(PhaseError) as err:
        canary_ingress(INGRESS["no_rules"], "keystone-canary", "green", None, 10, LABELS)
    assert str(err.value) == "Ingress keystone has no http paths for a canary to copy"


def test_a_resource_backend_needs_canary_port() -> None:
    with pytest.raises(PhaseError) as err:
        canary_ingress(INGRESS["resource_backend"], "keystone-canary", "green", None, 10, LABELS)
    assert "path /static has no Service port to reuse; give canary_port" in str(err.value)
    body = canary_ingress(INGRESS["resource_backend"], "keystone-canary", "green", 80, 10, LABELS)
    assert body["spec"]["rules"][0]["http"]["paths"][0]["backend"] == {
        "service": {"name": "green", "port": {"number": 80}}}
    assert "ingressClassName" not in body["spec"]


@pytest.mark.parametrize("annotations, weight", [
    (None, 0),
    ({"nginx.ingress.kubernetes.io/canary-weight": "50"}, 0),  # not a canary without canary: "true"
    ({"nginx.ingress.kubernetes.io/canary": "true", "nginx.ingress.kubernetes.io/canary-weight": "50"}, 50),
    ({"nginx.ingress.kubernetes.io/canary": "true"}, 0),
    ({"nginx.ingress.kubernetes.io/canary": "true", "nginx.ingress.kubernetes.io/canary-weight": "half"}, 0),
])
def test_ingress_weight(annotations: Optional[Dict[str, str]], weight: int) -> None:
    assert ingress_weight({"metadata": {"annotations": annotations}}) == weight
    assert ingress_weight(None) == 0


@pytest.mark.parametrize("current, steps", [(0, [10, 50, 100]), (10, [50, 100]), (30, [50, 100]), (100, [])])
def test_remaining(current: int, steps: List[int]) -> None:
    assert remaining([10, 50, 100], current) == steps


def test_port_ref() -> None:
    assert port_ref(None) is None
    assert port_ref(5000) == {"number": 5000}
    assert port_ref("ks-pub") == {"name": "ks-pub"}


@pytest.mark.parametrize("case", ROUTES, ids=[c["name"] for c in ROUTES])
def test_route_weights(case: Dict[str, Any]) -> None:
    assert route_weight(case["route"], case["canary"]) == case["weight"]
    body = route_body(case["route"], case["canary"], case["set"])
    assert body["spec"] == case["expect"]
    assert (body["apiVersion"], body["kind"], body["metadata"]) == (
        "route.openshift.io/v1", "Route", {"name": "keystone", "namespace": "openstack"})


# -- planning against a fake cluster --------------------------------------------------------

def _not_found() -> NotFoundError:
    return NotFoundError(ApiException(status=404, reason="Not Found"))


class _Res:
    def __init__(self, name: str, objects: Dict[str, Dict[str, Any]]) -> None:
        self.name, self.objects, self.applied = name, objects, []

    def get(self, name: str, namespace: str) -> Any:
        if name not in self.objects:
            raise _not_found()
        obj = copy.deepcopy(self.objects[name])
        return type("R", (), {"to_dict": lambda _self: obj})()

    def server_side_apply(self, body: Dict[str, Any], **kwargs: Any) -> Any:
        self.applied.append((body, kwargs))
        return type("R", (), {"to_dict": lambda _self: body})()


class _Resources:
    def __init__(self, served: Dict[str, Any]) -> None:
        self.served, self.invalidated = served, 0

    def get(self, api_version: str, kind: str) -> Any:
        if kind not in self.served:
            raise ResourceNotFoundError(f"No matches found for {kind}")
        return self.served[kind]

    def invalidate_cache(self) -> None:
        self.invalidated += 1


class _Dyn:
    def __init__(self, **served: Any) -> None:
        self.resources = _Resources(served)


def _req(action: str = "rollout", backend: str = "ingress_canary", **kw: Any) -> TrafficRequest:
    base: Dict[str, Any] = {"ingress": "keystone", "route": "keystone", "canary_service": "keystone-api-green"}
    base.update(kw)
    return TrafficRequest(action=action, service="keystone", release="keystone", namespace="openstack",
                          backend=backend, **base)


def _canary(weight: int, service: str = "keystone-api-green") -> Dict[str, Any]:
    return canary_ingress(INGRESS["primary"], "keystone-canary", service, None, weight, LABELS)


def test_a_first_rollout_takes_every_step() -> None:
    ingresses = _Res("ingresses", {"keystone": INGRESS["primary"]})
    backend = IngressCanary(_Dyn(Ingress=ingresses), _req(pause_seconds=30, check=Check(url="http://k/v3")))
    plan = backend.plan()
    assert plan.changed is True and plan.steps == [10, 50, 100]
    assert (plan.before, plan.after) == ({"weight": 0, "canary_service": "keystone-api-green"},
                                         {"weight": 100, "canary_service": "keystone-api-green"})
    assert plan.key == "Ingress/keystone-canary"
    assert plan.block == {"backend": "ingress_canary", "target": "keystone", "canary_service": "keystone-api-green",
                          "from_weight": 0, "steps": [10, 50, 100], "pause_seconds": 30,
                          "check": "GET http://k/v3 expects 200"}


def test_a_rollout_resumes_from_the_live_weight() -> None:
    ingresses = _Res("ingresses", {"keystone": INGRESS["primary"], "keystone-canary": _canary(50)})
    plan = IngressCanary(_Dyn(Ingress=ingresses), _req()).plan()
    assert plan.steps == [100] and plan.block["from_weight"] == 50


def test_a_rollout_at_its_final_weight_changes_nothing() -> None:
    ingresses = _Res("ingresses", {"keystone": INGRESS["primary"], "keystone-canary": _canary(100)})
    plan = IngressCanary(_Dyn(Ingress=ingresses), _req()).plan()
    assert plan.changed is False and plan.steps == []
    assert plan.note == "Ingress keystone-canary sends 100% to Service keystone-api-green"
    assert plan.after == plan.before


def test_a_rollout_at_its_weight_but_to_another_canary_applies_it_again() -> None:
    ingresses = _Res("ingresses", {"keystone": INGRESS["primary"], "keystone-canary": _canary(100, "old-canary")})
    plan = IngressCanary(_Dyn(Ingress=ingresses), _req()).plan()
    assert plan.changed is True and plan.steps == [100]


def test_a_drain_without_a_canary_ingress_changes_nothing() -> None:
    ingresses = _Res("ingresses", {"keystone": INGRESS["primary"]})
    plan = IngressCanary(_Dyn(Ingress=ingresses), _req("drain", canary_service=None)).plan()
    assert plan.changed is False and plan.note == "Ingress keystone-canary does not exist"


def test_a_drain_keeps_the_live_canary_service_and_applies_the_whole_ingress() -> None:
    ingresses = _Res("ingresses", {"keystone": INGRESS["primary"], "keystone-canary": _canary(50, "old-canary")})
    backend = IngressCanary(_Dyn(Ingress=ingresses), _req("drain", canary_service=None))
    plan = backend.plan()
    assert plan.changed is True and plan.steps == [0]
    assert plan.block["drain_grace_seconds"] == 30 and plan.block["canary_service"] == "old-canary"
    backend.set_weight(0)
    (body, kwargs), = ingresses.applied
    assert body == _canary(0, "old-canary")  # the whole object: a smaller apply would drop the rules
    assert kwargs["field_manager"] == "lcm.openstack-traffic" and kwargs["force_conflicts"] is True


def test_a_missing_primary_ingress() -> None:
    with pytest.raises(ObjectNotFound) as err:
        IngressCanary(_Dyn(Ingress=_Res("ingresses", {})), _req()).plan()
    assert str(err.value) == "Ingress keystone not found in namespace openstack"


def test_no_route_api_names_the_fix() -> None:
    with pytest.raises(PhaseError) as err:
        RouteWeights(_Dyn(), _req(backend="openshift_route"))
    msg = str(err.value)
    assert msg.startswith("the cluster does not serve Route in route.openshift.io/v1; the openshift_route "
                          "backend needs OpenShift's Route API")
    assert "install the Route CRD" in msg and "use backend ingress_canary or service_selector" in msg


def test_a_missing_route_asks_discovery_again_before_blaming_the_name() -> None:
    dyn = _Dyn(Route=_Res("routes", {}))
    backend = RouteWeights(dyn, _req(backend="openshift_route"))
    with pytest.raises(ObjectNotFound) as err:
        backend.plan()
    assert str(err.value) == "Route keystone not found in namespace openstack"
    assert dyn.resources.invalidated == 1
    # a CRD removed since discovery was cached: the second look says so
    del dyn.resources.served["Route"]
    with pytest.raises(PhaseError) as err:
        backend.plan()
    assert "needs OpenShift's Route API" in str(err.value)


def test_a_route_rollout_plans_from_the_canary_share() -> None:
    route = copy.deepcopy(ROUTES[1]["route"])  # the canary at 50%
    dyn = _Dyn(Route=_Res("routes", {"keystone": route}))
    backend = RouteWeights(dyn, _req(backend="openshift_route", steps=[25, 50, 75, 100]))
    plan = backend.plan()
    assert plan.steps == [75, 100] and plan.key == "Route/keystone"
    assert backend.describe(75) == ("Route keystone sends 75% to Service keystone-api-green, "
                                    "25% to Service keystone-api")
