"""plugins/module_utils/traffic/selector.py: what a blue/green shift plans from the Service and its
EndpointSlices, when it has nothing to do, and what its timeout says."""

from __future__ import annotations

import copy
from typing import Any, Dict, List, Optional

import pytest
import yaml
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import NotFoundError

from ansible_collections.lcm.openstack.plugins.module_utils.traffic.endpoints import Settled
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import ObjectNotFound, PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.plain import plain
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.request import TrafficRequest
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.selector import DRAINED, SelectorBackend
from support.paths import UNIT_FIXTURES

FIXTURES = UNIT_FIXTURES / "traffic"
DATA = yaml.safe_load((FIXTURES / "endpoints.yaml").read_text())
PODS = yaml.safe_load((FIXTURES / "pods.yaml").read_text())
NAMES = {"u-blue-1": "web-blue-1", "u-blue-2": "web-blue-2", "u-green-1": "web-green-1",
         "u-green-2": "web-green-2", "u-plain-1": "web-plain-1"}


class _Obj:
    def __init__(self, data: Any) -> None:
        self.data = data

    def to_dict(self) -> Any:
        return copy.deepcopy(self.data)


class _Res:
    def __init__(self, kind: str, dyn: "_Dyn") -> None:
        self.kind, self.dyn, self.name = kind, dyn, kind.lower() + "s"
        self.applied: List[tuple] = []

    def get(self, name: Optional[str] = None, namespace: Optional[str] = None,
            label_selector: Optional[str] = None, **_kw: Any) -> _Obj:
        if self.kind == "EndpointSlice":
            return _Obj({"metadata": {"resourceVersion": "1"}, "items": self.dyn.slices})
        if self.kind == "Pod" and name is None:
            self.dyn.pod_selectors.append(label_selector)
            pairs = [p.split("=", 1) for p in (label_selector or "").split(",") if p]
            return _Obj({"items": [p for p in self.dyn.selected
                                   if all(p["metadata"]["labels"].get(k) == v for k, v in pairs)]})
        if self.kind == "Pod":
            uid = {v: k for k, v in NAMES.items()}.get(name)
            if uid is None:
                raise NotFoundError(ApiException(status=404, reason="Not Found"))
            return _Obj({"metadata": {"name": name, "labels": DATA["pods"][uid]}})
        if self.dyn.service is None:
            raise NotFoundError(ApiException(status=404, reason="Not Found"))
        return _Obj(self.dyn.service)

    def server_side_apply(self, body: Dict[str, Any], **kwargs: Any) -> _Obj:
        self.applied.append((body, kwargs))
        return _Obj(body)


class _Resources:
    def __init__(self, dyn: "_Dyn") -> None:
        self.by_kind = {k: _Res(k, dyn) for k in ("Service", "EndpointSlice", "Pod")}

    def get(self, api_version: str, kind: str) -> _Res:
        return self.by_kind[kind]


class _Dyn:
    def __init__(self, track: Optional[str], *endpoints: str) -> None:
        selector = {"app": "web"}
        if track is not None:
            selector["track"] = track
        self.service: Optional[Dict[str, Any]] = {"metadata": {"name": "web"}, "spec": {"selector": selector}}
        self.slices = [{"metadata": {"name": "web-a"}, "endpoints": [DATA["endpoint"][e] for e in endpoints]}]
        self.selected: List[Dict[str, Any]] = [{"metadata": {"name": NAMES[uid], "labels": labels}}
                                               for uid, labels in DATA["pods"].items()]
        self.pod_selectors: List[Optional[str]] = []
        self.resources = _Resources(self)


def _req(action: str = "rollout", **kw: Any) -> TrafficRequest:
    return TrafficRequest(action=action, service="web", release="web", namespace="t", selector_service="web", **kw)


def test_a_rollout_plans_the_whole_selector_with_the_track_changed() -> None:
    backend = SelectorBackend(_Dyn("blue", "blue-1", "blue-2"), _req(track="green", min_ready=2))
    plan = backend.plan()
    assert plan.changed is True and plan.key == "Service/web"
    assert plan.before == {"selector": {"app": "web", "track": "blue"}}
    assert plan.after == {"selector": {"app": "web", "track": "green"}}
    assert plan.block == {"backend": "service_selector", "target": "web", "selector_label": "track",
                          "track": "green", "from_track": "blue", "min_ready": 2}
    assert [e.pod for e in plan.endpoints] == ["web-blue-1", "web-blue-2"]


def test_a_rollout_already_done_changes_nothing() -> None:
    backend = SelectorBackend(_Dyn("green", "green-1"), _req(track="green"))
    plan = backend.plan()
    assert plan.changed is False and plan.note == "Service web selects track=green: 1 ready endpoint(s)"


def test_a_rollout_selected_but_not_yet_ready_runs() -> None:
    plan = SelectorBackend(_Dyn("green", "green-2-unready"), _req(track="green")).plan()
    assert plan.changed is True  # the selector is set, the endpoints are not there: wait for them


def test_a_drain_waits_for_the_pods_listed_before() -> None:
    backend = SelectorBackend(_Dyn("blue", "blue-1", "blue-2-terminating"), _req("drain"))
    plan = backend.plan()
    assert plan.after == {"selector": {"app": "web", "track": DRAINED}}
    assert plan.block == {"backend": "service_selector", "target": "web", "selector_label": "track",
                          "from_track": "blue", "drain_grace_seconds": 0}
    goal = backend.goal(plan.endpoints)
    assert goal.gone == {"web-blue-1", "web-blue-2"} and goal.value == DRAINED and not goal.rollout


def test_a_drain_to_a_fallback_keeps_the_fallback_pods() -> None:
    req = _req("drain", fallback_track="green", drain_grace_seconds=10)
    backend = SelectorBackend(_Dyn(None, "blue-1", "green-1"), req)
    plan = backend.plan()
    assert plan.before == {"selector": {"app": "web"}}  # no track key: every track selected
    assert plan.after == {"selector": {"app": "web", "track": "green"}}
    assert plan.block["fallback_track"] == "green" and "from_track" not in plan.block
    assert backend.goal(plan.endpoints).gone == {"web-blue-1"}


@pytest.mark.parametrize("track, endpoints, changed", [
    (DRAINED, [], False),               # drained, nothing listed
    (DRAINED, ["blue-1"], True),        # drained, the controller not caught up (an interrupted run)
    ("red", ["plain-1"], False),        # drain of blue, but the Service selects red: nothing to take away
])
def test_drain_idempotence(track: str, endpoints: List[str], changed: bool) -> None:
    plan = SelectorBackend(_Dyn(track, *endpoints), _req("drain", track="blue")).plan()
    assert plan.changed is changed
    if track == "red":
        assert plan.note == "Service web selects track=red: pods with track=blue get no traffic"
        assert plan.after == plan.before


def test_the_service_must_exist_and_select() -> None:
    dyn = _Dyn("blue")
    dyn.service = None
    with pytest.raises(ObjectNotFound) as err:
        SelectorBackend(dyn, _req(track="green")).plan()
    assert str(err.value) == "Service web not found in namespace t"
    dyn.service = {"metadata": {"name": "web"}, "spec": {"type": "ExternalName"}}
    with pytest.raises(PhaseError) as err:
        SelectorBackend(dyn, _req(track="green")).plan()
    assert "Service web has no selector" in str(err.value)


def test_apply_writes_the_selector_under_the_traffic_manager() -> None:
    dyn = _Dyn("blue")
    SelectorBackend(dyn, _req(track="green")).apply({"app": "web", "track": "green"}, dry_run=True)
    (body, kwargs), = dyn.resources.by_kind["Service"].applied
    assert body == {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "t"},
                    "spec": {"selector": {"app": "web", "track": "green"}}}
    assert kwargs == {"name": "web", "namespace": "t", "field_manager": "lcm.openstack-traffic",
                      "force_conflicts": True, "dry_run": "All", "serializer": plain}


def test_the_timeout_names_the_pods_the_new_selector_picks() -> None:
    dyn = _Dyn("blue", "blue-1")
    dyn.selected = [dict(PODS["unschedulable"], metadata={"name": "web-green-2",
                                                          "labels": {"app": "web", "track": "green"}})]
    backend = SelectorBackend(dyn, _req(track="green"))
    plan = backend.plan()
    settled = Settled(False, [], ["EndpointSlice web-a still lists pod web-blue-1 (track=blue)", "no ready endpoint"])
    assert backend.timeout_message(plan, settled, 30) == (
        "timed out after 30s waiting for the EndpointSlices of Service web (selects track=green): "
        "EndpointSlice web-a still lists pod web-blue-1 (track=blue); no ready endpoint: pods with track=green: "
        "1 found, 1 not Ready (pod web-green-2: Pending: Unschedulable: 0/2 nodes are available)")
    assert dyn.pod_selectors == ["app=web", "app=web,track=green"]


def test_track_mode_fails_at_once_when_no_pod_carries_the_label() -> None:
    dyn = _Dyn(None, "plain-1")
    dyn.selected = [p for p in dyn.selected if "track" not in p["metadata"]["labels"]]
    with pytest.raises(PhaseError) as err:
        SelectorBackend(dyn, _req(track="green")).plan()
    assert str(err.value).startswith("selector_mode track cannot work on Service web: none of the 1 pod(s) it "
                                     "selects (app=web) carries the label track")
    dyn.selected = []  # no pod at all yet: nothing says the mode cannot work
    assert SelectorBackend(dyn, _req(track="green")).plan().changed is True


def test_a_track_rollout_after_a_gate_drain_drops_the_gate() -> None:
    dyn = _Dyn("blue")
    dyn.service["spec"]["selector"]["lifecycle.openstack.org/traffic"] = "drained"
    plan = SelectorBackend(dyn, _req(track="green")).plan()
    assert plan.after == {"selector": {"app": "web", "track": "green"}}


@pytest.mark.parametrize("endpoints, back", [
    (["blue-1"], {"app": "web", "track": "blue"}),  # blue was serving: back to it
    ([], None),                                     # nothing was serving (drained): stay on green
])
def test_a_failed_rollout_goes_back_only_to_a_selector_that_served(endpoints: List[str], back: Any) -> None:
    backend = SelectorBackend(_Dyn("blue", *endpoints), _req(track="green"))
    selector, why = backend.after_failed_rollout(backend.plan())
    assert selector == back
    assert why == ("; the selector is back to track=blue" if back else
                   "; the selector stays on track=green: the Service had no ready endpoint before either, "
                   "and these pods get traffic once they are Ready")
