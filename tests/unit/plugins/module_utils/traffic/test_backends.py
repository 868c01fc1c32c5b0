"""plugins/module_utils/traffic/backends.py: the plan of a move, the
release's own selector, the live selector, the resource lookup and the
write under the traffic field manager."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Dict, List, Optional

import pytest
from kubernetes.dynamic.exceptions import ResourceNotFoundError
from support.fake_api import status_error

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError, ObjectNotFound, PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.traffic import backends
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.backends import (
    DRAINED, GATE_LABEL, Plan, apply, live_selector, own_selector, resource,
)


class _Obj:
    def __init__(self, body: Dict[str, Any]) -> None:
        self.body = body

    def to_dict(self) -> Dict[str, Any]:
        return self.body


class _Services:
    name = "services"

    def __init__(self, live: Optional[Dict[str, Any]] = None, refuse: Optional[Exception] = None) -> None:
        self.live, self.refuse, self.applied = live, refuse, []  # type: ignore[var-annotated]

    def get(self, name: str, namespace: str) -> _Obj:
        if self.live is None:
            raise status_error(404, "NotFound", f'services "{name}" not found')
        return _Obj(self.live)

    def server_side_apply(self, **kwargs: Any) -> _Obj:
        self.applied.append(kwargs)
        if self.refuse:
            raise self.refuse
        return _Obj(kwargs["body"])


def test_a_plan_keeps_only_the_block_fields_given_and_names_its_object() -> None:
    plan = Plan(kind="Service", name="keystone-api", before={}, after={}, changed=True,
                block={"backend": "service_selector", "steps": None, "drain_grace_seconds": 0})
    assert plan.block == {"backend": "service_selector", "drain_grace_seconds": 0}
    assert plan.key == "Service/keystone-api" and plan.steps == [] and plan.note == ""


@pytest.mark.parametrize("selector, own", [
    ({"application": "keystone", GATE_LABEL: "drained"}, {"application": "keystone"}),
    ({"application": "keystone", "track": DRAINED}, {"application": "keystone"}),
    ({"application": "keystone", "track": "2025.1"}, {"application": "keystone", "track": "2025.1"}),
])
def test_the_releases_own_selector_drops_what_either_drain_added(selector: Dict[str, str], own: Dict[str, str]) -> None:
    assert own_selector(selector) == own


def test_the_live_selector_of_a_service() -> None:
    assert live_selector(_Services({"spec": {"selector": {"application": "keystone"}}}), "keystone-api",
                         "openstack") == {"application": "keystone"}
    with pytest.raises(ObjectNotFound, match="Service keystone-api not found in namespace openstack"):
        live_selector(_Services(None), "keystone-api", "openstack")
    with pytest.raises(PhaseError, match="has no selector: its endpoints are managed outside Kubernetes"):
        live_selector(_Services({"spec": {}}), "keystone-api", "openstack")


def test_a_kind_the_cluster_does_not_serve_is_named_with_the_hint() -> None:
    def unserved(api_version: str, kind: str) -> Any:
        raise ResourceNotFoundError(f"{kind} not found")
    dyn = SimpleNamespace(resources=SimpleNamespace(get=unserved))
    with pytest.raises(PhaseError) as err:
        resource(dyn, "route.openshift.io/v1", "Route", "use backend ingress_canary off OpenShift")
    assert str(err.value) == ("the cluster does not serve Route in route.openshift.io/v1; "
                              "use backend ingress_canary off OpenShift")


def test_the_write_is_a_server_side_apply_under_the_traffic_manager() -> None:
    services = _Services()
    body = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "keystone-api"},
            "spec": {"selector": {"application": "keystone"}}}
    assert apply(services, body, "openstack", dry_run=True) == body
    sent: List[Dict[str, Any]] = services.applied
    assert sent[0]["field_manager"] == backends.TRAFFIC_MANAGER == "lcm.openstack-traffic"
    assert sent[0]["force_conflicts"] is True and sent[0]["dry_run"] == "All" and sent[0]["namespace"] == "openstack"


def test_a_refused_write_gives_the_apiservers_reason() -> None:
    refused = status_error(422, "Invalid", 'Service "keystone-api" is invalid: spec.selector: Invalid value: "a b"')
    body = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "keystone-api"}, "spec": {}}
    with pytest.raises(KubeError) as err:
        apply(_Services(refuse=refused), body, "openstack")
    assert str(err.value).startswith("the apiserver refused Service keystone-api: ")
    assert "spec.selector: Invalid value" in str(err.value)
