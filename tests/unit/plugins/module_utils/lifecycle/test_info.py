"""plugins/module_utils/lifecycle/info.py: Phases and ServiceLifecycles read
back, filtered, oldest Phase first; a refused list worded."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

import pytest
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import api_exception

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.info import lifecycle_summary, list_lifecycle

SERVICE, TYPE = "lifecycle.openstack.org/service", "lifecycle.openstack.org/phase-type"


def _phase(name: str, ptype: str, state: Optional[str], started: Optional[str], service: str = "keystone") -> Dict[str, Any]:
    status = {"state": state, "startedAt": started} if state else {}
    return {"metadata": {"name": name, "namespace": "openstack", "labels": {SERVICE: service, TYPE: ptype}},
            "spec": {"type": ptype, "service": service, "release": service}, "status": status}


PHASES = [
    _phase("keystone-test-2", "test", "Failed", "2026-11-24T03:05:00Z"),
    _phase("keystone-install-1", "install", "Succeeded", "2026-11-24T03:00:00Z"),
    _phase("keystone-upgrade-3", "upgrade", None, None),
    _phase("glance-install-1", "install", "Running", "2026-11-24T02:00:00Z", service="glance"),
]
LIFECYCLES = [{
    "metadata": {"name": "keystone", "namespace": "openstack", "labels": {SERVICE: "keystone"}},
    "spec": {"service": "keystone", "release": "keystone"},
    "status": {"state": "Operational", "currentVersion": "2025.1", "currentPhase": "",
               "history": [{"name": "keystone-install-1", "type": "install", "result": "Succeeded",
                            "startedAt": "2026-11-24T03:00:00Z", "completedAt": "2026-11-24T03:01:00Z"}]},
}]


class _Listed:
    def __init__(self, items: List[Dict[str, Any]]) -> None:
        self.items = items

    def to_dict(self) -> Dict[str, Any]:
        return {"items": self.items}


class _Res:
    def __init__(self, kind: str, items: List[Dict[str, Any]], refuse: bool) -> None:
        self.kind, self.name, self.items, self.refuse = kind, kind.lower() + "s", items, refuse
        self.selectors: List[Optional[str]] = []

    def get(self, namespace: Optional[str] = None, label_selector: Optional[str] = None) -> _Listed:
        self.selectors.append(label_selector)
        if self.refuse:
            exc = ApiException(status=403, reason="Forbidden")
            exc.body = json.dumps({"kind": "Status", "code": 403, "reason": "Forbidden", "message": (
                f'{self.name}.lifecycle.openstack.org is forbidden: User "alice" cannot list resource '
                f'"{self.name}" in API group "lifecycle.openstack.org" in the namespace "openstack"')}).encode()
            raise api_exception(exc)
        wanted = dict(s.split("=") for s in (label_selector or "").split(",") if s)
        return _Listed([o for o in self.items
                        if all(o["metadata"]["labels"].get(k) == v for k, v in wanted.items())])


class _Cluster:
    def __init__(self, refuse: bool = False) -> None:
        self.resources = self
        self.res = {"Phase": _Res("Phase", PHASES, refuse), "ServiceLifecycle": _Res("ServiceLifecycle", LIFECYCLES, refuse)}

    def get(self, api_version: str, kind: str) -> _Res:
        return self.res[kind]


def test_every_phase_oldest_first_and_every_record() -> None:
    out = list_lifecycle(_Cluster(), "openstack")
    # a Phase not started yet sorts first (no start time), then by start time
    assert [p["name"] for p in out["phases"]] == [
        "keystone-upgrade-3", "glance-install-1", "keystone-install-1", "keystone-test-2"]
    assert [s["service"] for s in out["lifecycles"]] == ["keystone"]


def test_the_service_and_type_filter_on_the_server_the_state_and_name_here() -> None:
    cluster = _Cluster()
    out = list_lifecycle(cluster, "openstack", service="keystone", phase_type="install")
    assert [p["name"] for p in out["phases"]] == ["keystone-install-1"]
    assert cluster.res["Phase"].selectors == [f"{SERVICE}=keystone,{TYPE}=install"]
    assert cluster.res["ServiceLifecycle"].selectors == [f"{SERVICE}=keystone"]
    assert [p["name"] for p in list_lifecycle(_Cluster(), "openstack", state="Pending")["phases"]] == [
        "keystone-upgrade-3"]
    assert [p["name"] for p in list_lifecycle(_Cluster(), "openstack", name="keystone-test-2")["phases"]] == [
        "keystone-test-2"]


def test_a_record_comes_with_its_history_and_its_report() -> None:
    out = lifecycle_summary(LIFECYCLES[0])
    assert out["state"] == "Operational" and out["current_version"] == "2025.1"
    assert out["current_phase"] is None  # an empty currentPhase is no phase
    assert out["history"] == [{"name": "keystone-install-1", "type": "install", "result": "Succeeded",
                               "started_at": "2026-11-24T03:00:00Z", "completed_at": "2026-11-24T03:01:00Z",
                               "message": ""}]
    assert out["report"] == "keystone (openstack): no flow recorded yet; service Operational, version 2025.1"


def test_a_refused_list_names_the_permission() -> None:
    with pytest.raises(KubeError) as err:
        list_lifecycle(_Cluster(refuse=True), "openstack")
    assert str(err.value).startswith("forbidden: the credentials in use may not list phases in namespace openstack. "
                                     "Grant the verb 'list' on 'phases' (API group 'lifecycle.openstack.org')")


def test_without_filters_nothing_is_selected_on_the_server() -> None:
    cluster = _Cluster()
    list_lifecycle(cluster, None)
    assert cluster.res["Phase"].selectors == [None] and cluster.res["ServiceLifecycle"].selectors == [None]


def test_a_type_alone_selects_phases_only_and_filters_combine() -> None:
    cluster = _Cluster()
    out = list_lifecycle(cluster, "openstack", phase_type="install", state="Running")
    assert cluster.res["Phase"].selectors == [f"{TYPE}=install"]
    assert cluster.res["ServiceLifecycle"].selectors == [None]  # a record has no phase type
    assert [p["name"] for p in out["phases"]] == ["glance-install-1"]
    assert [s["service"] for s in out["lifecycles"]] == ["keystone"]
    assert list_lifecycle(_Cluster(), "openstack", service="glance", name="keystone-install-1") == {
        "phases": [], "lifecycles": []}


def test_phases_started_at_the_same_moment_are_ordered_by_name() -> None:
    cluster = _Cluster()
    cluster.res["Phase"].items = [_phase("keystone-upgrade-2", "upgrade", "Running", "2026-11-24T03:00:00Z"),
                                  _phase("keystone-backup-2", "backup", "Succeeded", "2026-11-24T03:00:00Z")]
    assert [p["name"] for p in list_lifecycle(cluster, "openstack")["phases"]] == [
        "keystone-backup-2", "keystone-upgrade-2"]


def test_phases_started_within_one_second_are_ordered_by_their_micro_times() -> None:
    """A quick traffic rollout, then its flow's test in the same second: the
    rollout is older, though its name sorts after the test's. A Phase an
    older collection wrote (whole seconds) sorts by time among MicroTimes,
    though "…:05Z" sorts after "…:05.12Z" as text."""
    cluster = _Cluster()
    cluster.res["Phase"].items = [
        _phase("keystone-test-b", "test", "Running", "2026-11-24T03:00:05.910000Z"),
        _phase("keystone-trafficrollout-a", "trafficrollout", "Succeeded", "2026-11-24T03:00:05.120000Z"),
        _phase("keystone-upgrade-c", "upgrade", "Succeeded", "2026-11-24T03:00:05Z"),
        _phase("keystone-trafficdrain-d", "trafficdrain", "Succeeded", "2026-11-24T03:00:04.5Z"),
    ]
    assert [p["name"] for p in list_lifecycle(cluster, "openstack")["phases"]] == [
        "keystone-trafficdrain-d", "keystone-upgrade-c", "keystone-trafficrollout-a", "keystone-test-b"]


def test_a_record_with_a_flow_and_history_messages_reads_back_whole() -> None:
    record = {"metadata": {"name": "keystone", "namespace": "openstack"},
              "spec": {"service": "keystone", "release": "keystone"},
              "status": {"state": "Upgrading", "currentVersion": "2025.1", "targetVersion": "2025.2",
                         "currentPhase": "keystone-upgrade-3",
                         "flow": {"name": "update", "state": "Running", "startedAt": "2026-11-24T03:00:00Z",
                                  "fromVersion": "2025.1", "targetVersion": "2025.2"},
                         "history": [{"name": "keystone-backup-2", "type": "backup", "result": "Failed",
                                      "message": "mariadb-backup exited 1"}]}}
    out = lifecycle_summary(record)
    assert (out["state"], out["current_version"], out["target_version"], out["current_phase"]) == (
        "Upgrading", "2025.1", "2025.2", "keystone-upgrade-3")
    assert out["flow"]["name"] == "update" and out["flow"]["state"] == "Running"
    assert out["history"] == [{"name": "keystone-backup-2", "type": "backup", "result": "Failed", "started_at": None,
                               "completed_at": None, "message": "mariadb-backup exited 1"}]
    assert out["report"].startswith("keystone (openstack): update flow Running, ")
