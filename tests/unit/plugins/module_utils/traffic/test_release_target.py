"""plugins/module_utils/traffic/release_target.py: a request that names no object gets the one its
deployed release renders (read from Helm's storage record, or through Helm for the sql driver), and a
step with nothing to route is noted on the running flow."""

from __future__ import annotations

import copy
import json
from typing import Any, Dict, List, Optional

import pytest
import yaml

from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import api_exception

from support.fake_api import Answer, Kinds
from support.paths import UNIT_FIXTURES

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.helm import storage
from ansible_collections.lcm.openstack.plugins.module_utils.traffic import release_target
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.request import TrafficRequest

FIXTURES = UNIT_FIXTURES / "traffic_target"
NOTHING = "release openvswitch renders no Service: nothing to route"


def _record(chart: str, config: Optional[Dict[str, Any]] = None, defaults: bool = True) -> Dict[str, Any]:
    """A release record of a chart's excerpt: its objects as the manifest, its values as the chart's."""
    data = yaml.safe_load((FIXTURES / f"{chart}.yaml").read_text())
    manifest = "".join(f"---\n# Source: {chart}/templates/x.yaml\n{yaml.safe_dump(o)}"
                       for o in data["objects"] if o["kind"] != "Job")
    return {"version": 1, "manifest": manifest, "config": config or {},
            "chart": {"metadata": {"version": "0.1.0"}, "values": data["values"] if defaults else {}}}


class _Secrets:
    kind = "Secret"

    def __init__(self, record: Optional[Dict[str, Any]]) -> None:
        self.items = [] if record is None else [
            {"metadata": {"labels": {"version": "1"}}, "data": {"release": storage.encode(record)}}]

    def get(self, namespace: str, label_selector: str) -> Answer:
        return Answer({"items": self.items})


def _not_found(name: str) -> Exception:
    exc = ApiException(status=404, reason="NotFound")
    exc.body = json.dumps({"kind": "Status", "code": 404, "reason": "NotFound", "details": {"name": name}}).encode()
    return api_exception(exc)


class _Lifecycles:
    kind = "ServiceLifecycle"

    def __init__(self, record: Optional[Dict[str, Any]] = None) -> None:
        self.record, self.replaced = record, []  # type: ignore[var-annotated]
        self.status = self

    def get(self, name: str, namespace: str) -> Answer:
        if self.record is None:
            raise _not_found(name)
        return Answer(self.record)

    def replace(self, body: Dict[str, Any], namespace: str) -> Answer:
        self.replaced.append(copy.deepcopy(body))
        self.record = body
        return Answer(body)


def _dyn(record: Optional[Dict[str, Any]], lifecycle: Optional[Dict[str, Any]] = None) -> Kinds:
    return Kinds(_Secrets(record), _Lifecycles(lifecycle))


def _req(service: str, action: str = "rollout", **kw: Any) -> TrafficRequest:
    return TrafficRequest(action=action, service=service, release=service, namespace="openstack", **kw)


def test_the_target_is_what_the_release_renders_and_the_request_gets_it() -> None:
    req = _req("neutron")
    chosen = release_target.resolve(_dyn(_record("neutron")), req, env={})
    assert (chosen.kind, chosen.name, req.selector_service) == ("Service", "neutron-server", "neutron-server")


def test_a_release_with_no_service_has_nothing_to_route_and_the_request_stays_unnamed() -> None:
    req = _req("openvswitch")
    chosen = release_target.resolve(_dyn(_record("openvswitch")), req, env={})
    assert chosen.nothing and chosen.why == NOTHING and req.selector_service is None


def test_the_users_values_are_read_over_the_charts() -> None:
    # nova's three Services told apart by the endpoints the user's values give, the chart giving none.
    nova = yaml.safe_load((FIXTURES / "nova.yaml").read_text())["values"]
    req = _req("nova")
    assert release_target.resolve(_dyn(_record("nova", config=nova, defaults=False)), req, env={}).name == "nova-api"
    with pytest.raises(PhaseError, match="renders 3 Services"):
        release_target.resolve(_dyn(_record("nova", defaults=False)), _req("nova"), env={})


def test_a_release_not_deployed_names_the_input_that_does_without_it() -> None:
    with pytest.raises(PhaseError) as err:
        release_target.resolve(_dyn(None), _req("keystone", backend="ingress_canary"), env={})
    assert str(err.value) == (
        "release keystone has no deployed revision in namespace openstack to read the traffic target from; "
        "deploy it first, or name the Ingress with the flow input traffic_target (the traffic module's ingress)")


def test_under_the_sql_driver_helm_reads_the_release(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: List[Any] = []
    record = _record("placement")

    def by_helm(helm: Any, namespace: str, release: str, with_manifest: bool = False) -> storage.Deployed:
        asked.append((helm.env["HELM_DRIVER"], namespace, release, with_manifest))
        return storage.Deployed(revision=1, manifest=record["manifest"], defaults=record["chart"]["values"])
    monkeypatch.setattr(storage, "deployed_by_helm", by_helm)
    monkeypatch.setattr(release_target, "find_helm", lambda binary, env: "/usr/bin/helm")
    req = _req("placement")
    assert release_target.resolve(_dyn(None), req, env={"HELM_DRIVER": "sql"}).name == "placement-api"
    assert asked == [("sql", "openstack", "placement", True)]


def _running(flow: str = "greenfield") -> Dict[str, Any]:
    return {"metadata": {"name": "openvswitch", "namespace": "openstack", "resourceVersion": "1"},
            "spec": {"service": "openvswitch", "release": "openvswitch"},
            "status": {"flow": {"name": flow, "state": "Running", "startedAt": "2026-11-22T05:00:00Z",
                                "phases": ["openvswitch-install-1", "openvswitch-test-1"]}}}


def test_a_skipped_step_is_noted_on_the_running_flow_and_nothing_moves() -> None:
    dyn = _dyn(_record("openvswitch"), _running())
    req = _req("openvswitch")
    result = release_target.skipped(dyn, req, release_target.resolve(dyn, req, env={}), check_mode=False)
    assert (result["changed"], result["phase"], result["skipped"]) == (False, None, NOTHING)
    assert result["message"] == f"trafficrollout skipped: {NOTHING}"
    assert result["target"] == {"kind": "Service", "name": "", "why": NOTHING}
    [written] = dyn.resources.get("", "ServiceLifecycle").replaced
    assert written["status"]["flow"]["skipped"] == [{"phase": "trafficrollout", "reason": NOTHING, "after": 2}]


def test_without_a_running_flow_or_in_check_mode_nothing_is_written() -> None:
    for lifecycle, check_mode in ((None, False), (dict(_running(), status={}), False), (_running(), True)):
        dyn = _dyn(_record("openvswitch"), lifecycle)
        req = _req("openvswitch", action="drain")
        result = release_target.skipped(dyn, req, release_target.resolve(dyn, req, env={}), check_mode)
        assert result["skipped"] == NOTHING
        assert dyn.resources.get("", "ServiceLifecycle").replaced == []
