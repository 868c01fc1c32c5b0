"""plugins/module_utils/traffic/gate.py: the gate on a stock openstack-helm Service (keystone-api, as the
chart renders it): what a drain and a rollout plan, when they have nothing to do, when they refuse at once,
and what a timeout says."""

from __future__ import annotations

import copy
from typing import Any, Dict, List, Optional

import pytest
import yaml
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import NotFoundError

from ansible_collections.lcm.openstack.plugins.module_utils.traffic.endpoints import Settled
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.request import TrafficRequest
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.runner import backend_for
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.backends import (
    DRAINED, GATE_LABEL, GATED, own_selector,
)
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.gate import GateBackend
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.selector import SelectorBackend
from support.paths import UNIT_FIXTURES

DATA = yaml.safe_load((UNIT_FIXTURES / "traffic" / "keystone_api.yaml").read_text())
OWN = DATA["service"]["spec"]["selector"]
GATED_SELECTOR = dict(OWN, **{GATE_LABEL: GATED})


class _Obj:
    def __init__(self, data: Any) -> None:
        self.data = data

    def to_dict(self) -> Any:
        return copy.deepcopy(self.data)


def _matches(labels: Dict[str, str], selector: Optional[str]) -> bool:
    pairs = [p.split("=", 1) for p in (selector or "").split(",") if p]
    return all(labels.get(k) == v for k, v in pairs)


class _Res:
    def __init__(self, kind: str, cluster: "_Cluster") -> None:
        self.kind, self.cluster, self.name = kind, cluster, kind.lower() + "s"
        self.applied: List[Dict[str, Any]] = []

    def get(self, name: Optional[str] = None, namespace: Optional[str] = None,
            label_selector: Optional[str] = None, **_kw: Any) -> _Obj:
        pods = {uid: p for uid, p in DATA["pods"].items() if uid in self.cluster.pods}
        if self.kind == "EndpointSlice":
            return _Obj({"metadata": {"resourceVersion": "1"}, "items": self.cluster.slices})
        if self.kind == "Pod" and name is None:
            self.cluster.pod_selectors.append(label_selector)
            return _Obj({"items": [{"metadata": {"name": p["name"], "labels": p["labels"]}}
                                   for p in pods.values() if _matches(p["labels"], label_selector)]})
        if self.kind == "Pod":
            for pod in pods.values():
                if pod["name"] == name:
                    return _Obj({"metadata": {"name": name, "labels": pod["labels"]}})
            raise NotFoundError(ApiException(status=404, reason="Not Found"))
        return _Obj(self.cluster.service)

    def server_side_apply(self, body: Dict[str, Any], **_kw: Any) -> _Obj:
        self.applied.append(body)
        return _Obj(body)


class _Resources:
    def __init__(self, cluster: "_Cluster") -> None:
        self.by_kind = {k: _Res(k, cluster) for k in ("Service", "EndpointSlice", "Pod")}

    def get(self, api_version: str, kind: str) -> _Res:
        return self.by_kind[kind]


class _Cluster:
    """keystone-api with `selector`, EndpointSlice entries `endpoints`, and the pods `pods` (uids) alive."""

    def __init__(self, selector: Dict[str, str], *endpoints: str, pods: Any = ("u-api-1", "u-api-2", "u-other")):
        self.service = dict(DATA["service"], spec=dict(DATA["service"]["spec"], selector=selector))
        self.slices = [{"metadata": {"name": "keystone-api-a"},
                        "endpoints": [DATA["endpoint"][e] for e in endpoints]}]
        self.pods = set(pods)
        self.pod_selectors: List[Optional[str]] = []
        self.resources = _Resources(self)


def _req(action: str = "rollout", **kw: Any) -> TrafficRequest:
    return TrafficRequest(action=action, service="keystone", release="keystone", namespace="openstack",
                          selector_service="keystone-api", **kw)


def test_the_gate_is_the_default_mode() -> None:
    assert isinstance(backend_for(_Cluster(OWN), _req()), GateBackend)
    assert isinstance(backend_for(_Cluster(OWN), _req(selector_mode="track", track="2025.2")), SelectorBackend)


def test_a_drain_adds_the_gate_key_to_the_release_selector() -> None:
    backend = GateBackend(_Cluster(OWN, "api-1", "api-2"), _req("drain"))
    plan = backend.plan()
    assert plan.changed is True
    assert plan.before == {"selector": OWN} and plan.after == {"selector": GATED_SELECTOR}
    assert plan.block == {"backend": "service_selector", "target": "keystone-api", "selector_label": GATE_LABEL,
                          "track": GATED, "drain_grace_seconds": 0}
    goal = backend.goal(plan.endpoints)
    assert goal.gone == {"keystone-api-5d8f-abcde", "keystone-api-5d8f-fghij"} and not goal.rollout


def test_a_rollout_restores_exactly_the_release_selector() -> None:
    backend = GateBackend(_Cluster(GATED_SELECTOR), _req(min_ready=2))
    plan = backend.plan()
    assert plan.changed is True and plan.after == {"selector": OWN}
    assert plan.block == {"backend": "service_selector", "target": "keystone-api", "selector_label": GATE_LABEL,
                          "from_track": GATED, "min_ready": 2}
    assert backend.setting(plan) == ("Service keystone-api: opening the gate, restoring the selector "
                                     "app.kubernetes.io/component=api,app.kubernetes.io/instance=keystone,"
                                     "app.kubernetes.io/name=keystone,application=keystone,component=api,"
                                     "release_group=keystone")


def test_a_rollout_after_a_helm_upgrade_restores_the_upgraded_selector() -> None:
    """Helm's three-way merge dropped the chart's app.kubernetes.io keys (pod.labels.include_app_kubernetes_io
    false) and left the gate: the rollout restores the selector the chart renders now."""
    upgraded = {k: v for k, v in GATED_SELECTOR.items() if not k.startswith("app.kubernetes.io/")}
    plan = GateBackend(_Cluster(upgraded), _req()).plan()
    assert plan.after == {"selector": {"release_group": "keystone", "application": "keystone", "component": "api"}}


def test_a_gate_rollout_after_a_track_drain_restores_the_selector_without_the_track() -> None:
    plan = GateBackend(_Cluster(dict(OWN, track=DRAINED)), _req()).plan()
    assert plan.after == {"selector": OWN}
    assert own_selector(dict(OWN, track="2025.1")) == dict(OWN, track="2025.1")  # a live track is kept


@pytest.mark.parametrize("selector, endpoints, action, changed", [
    (GATED_SELECTOR, [], "drain", False),                 # gated, nothing listed
    (GATED_SELECTOR, ["api-1"], "drain", True),           # gated, the controller not caught up yet
    (OWN, ["api-1", "api-2"], "rollout", False),          # open, ready pods of the release listed
    (OWN, ["api-1"], "rollout", False),                   # min_ready 1
    (OWN, ["api-2-unready"], "rollout", True),            # open, not Ready yet: wait for it
    (OWN, ["api-1", "other"], "rollout", True),           # a stale endpoint of another release's pod
    (GATED_SELECTOR, [], "rollout", True),
    (OWN, ["api-1"], "drain", True),
])
def test_idempotence(selector: Dict[str, str], endpoints: List[str], action: str, changed: bool) -> None:
    plan = GateBackend(_Cluster(selector, *endpoints), _req(action)).plan()
    assert plan.changed is changed
    if not changed:
        assert plan.after == plan.before


def test_the_messages_say_where_the_traffic_is() -> None:
    cluster = _Cluster(OWN, "api-1", "api-2")
    backend = GateBackend(cluster, _req())
    plan = backend.plan()
    assert plan.note == "Service keystone-api selects the release's pods: 2 ready endpoint(s)"
    drained = GateBackend(_Cluster(GATED_SELECTOR), _req("drain")).plan()
    assert drained.note == f"Service keystone-api is gated ({GATE_LABEL}={GATED}): drained, no endpoint left"


def test_a_rollout_whose_selector_picks_no_pod_fails_before_changing_anything() -> None:
    cluster = _Cluster(GATED_SELECTOR, pods=["u-other"])
    with pytest.raises(PhaseError) as err:
        GateBackend(cluster, _req()).plan()
    assert str(err.value).startswith("Service keystone-api's own selector (app.kubernetes.io/component=api,")
    assert "selects no pod: there is nothing to roll out to, and the Service stays drained" in str(err.value)
    assert cluster.resources.by_kind["Service"].applied == []


def test_a_selector_of_gate_keys_only_is_refused() -> None:
    with pytest.raises(PhaseError, match="there is no release selector to restore"):
        GateBackend(_Cluster({GATE_LABEL: GATED}), _req()).plan()


def test_a_rollout_that_times_out_keeps_the_gate_open() -> None:
    cluster = _Cluster(GATED_SELECTOR)
    cluster.pods = {"u-api-2"}
    backend = GateBackend(cluster, _req(min_ready=1))
    plan = backend.plan()
    settled = Settled(False, [], ["no ready endpoint"])
    message = backend.timeout_message(plan, settled, 30)
    assert message.startswith("timed out after 30s waiting for the EndpointSlices of Service keystone-api "
                              "(selects the release's pods (app.kubernetes.io/component=api,")
    assert message.endswith("no ready endpoint: pods with app.kubernetes.io/component=api,app.kubernetes.io/"
                            "instance=keystone,app.kubernetes.io/name=keystone,application=keystone,component=api,"
                            "release_group=keystone: 1 found, 1 not Ready (pod keystone-api-5d8f-fghij: "
                            "Pending)")
    assert backend.after_failed_rollout(plan) == (
        None, "; the gate stays open: the Service selects the release's pods, which get traffic once Ready")


def test_track_mode_on_a_chart_without_track_fails_at_once() -> None:
    """keystone's pods carry no `track` label: blue/green cannot work, and says so without waiting."""
    for action, kw in (("rollout", {"track": "2025.2"}), ("drain", {})):
        cluster = _Cluster(OWN, "api-1")
        with pytest.raises(PhaseError) as err:
            SelectorBackend(cluster, _req(action, selector_mode="track", **kw)).plan()
        assert str(err.value) == (
            "selector_mode track cannot work on Service keystone-api: none of the 2 pod(s) it selects "
            "(app.kubernetes.io/component=api,app.kubernetes.io/instance=keystone,app.kubernetes.io/name=keystone,"
            "application=keystone,component=api,release_group=keystone) carries the label track (the chart "
            "does not render it); use selector_mode gate, which needs only the labels the release already has")
        assert cluster.resources.by_kind["Service"].applied == []
