"""The ServiceLifecycle's state around Phases: inside a flow the flow sets it;
a Phase run outside any flow leaves a state that is true when it ends."""

from __future__ import annotations

import copy
from typing import Any, Dict, Optional

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.record import Lifecycle


class _Obj:
    def __init__(self, data: Dict[str, Any]) -> None:
        self.data = data

    def to_dict(self) -> Dict[str, Any]:
        return copy.deepcopy(self.data)


class _Records:
    def __init__(self, status: Dict[str, Any]) -> None:
        self.record = {"metadata": {"name": "keystone", "namespace": "openstack"}, "status": status}
        self.status = self

    def get(self, name: str, namespace: str) -> _Obj:
        return _Obj(self.record)

    def replace(self, body: Dict[str, Any], namespace: str) -> _Obj:  # the status subresource
        self.record = copy.deepcopy(body)
        return _Obj(self.record)


class _Dyn:
    def __init__(self, records: _Records) -> None:
        self.resources = self
        self.records = records

    def get(self, api_version: str, kind: str) -> _Records:
        return self.records


def _phase(ptype: str, state: Optional[str] = None) -> Dict[str, Any]:
    phase: Dict[str, Any] = {"metadata": {"name": f"keystone-{ptype}-1"}, "spec": {"type": ptype}}
    if state:
        phase["status"] = {"state": state, "startedAt": "2026-11-23T10:00:00Z",
                           "completedAt": "2026-11-23T10:01:00Z", "message": f"{ptype} {state}"}
    return phase


def _run(status: Dict[str, Any], ptype: str, result: str) -> Dict[str, Any]:
    records = _Records(status)
    lifecycle = Lifecycle(_Dyn(records), "openstack", "keystone", "keystone")
    lifecycle.phase_started(_phase(ptype))
    lifecycle.phase_ended(_phase(ptype, result))
    return records.record["status"]


@pytest.mark.parametrize("before, ptype, result, after", [
    ("", "install", "Failed", "Failed"),
    ("Operational", "test", "Failed", "Failed"),
    ("Operational", "test", "Succeeded", "Operational"),
    ("Operational", "upgrade", "Succeeded", "Operational"),
    ("", "install", "Succeeded", "Installing"),  # installed, not yet tested or opened: the next role says
    ("Operational", "uninstall", "Succeeded", "Removed"),
    ("Operational", "trafficdrain", "Succeeded", "Draining"),  # drained: waiting for its update
])
def test_a_phase_outside_any_flow_leaves_a_true_state(before: str, ptype: str, result: str, after: str) -> None:
    status = _run({"state": before} if before else {}, ptype, result)
    assert status["state"] == after
    assert status["history"][-1].get("stateBefore", "") == before
    assert status["currentPhase"] == ""


@pytest.mark.parametrize("result", ["Failed", "Succeeded"])
def test_inside_a_flow_the_state_is_the_flows_to_set(result: str) -> None:
    flow = {"name": "update", "state": "Running", "phases": []}
    status = _run({"state": "Operational", "flow": flow}, "upgrade", result)
    assert status["state"] == "Upgrading"  # the flow's rescue or next step decides
    assert "stateBefore" not in status["history"][-1]
    assert status["flow"]["phases"] == ["keystone-upgrade-1"]


def test_a_resumed_phase_keeps_the_state_from_before_its_first_run() -> None:
    records = _Records({"state": "Operational"})
    lifecycle = Lifecycle(_Dyn(records), "openstack", "keystone", "keystone")
    lifecycle.phase_started(_phase("test"))
    lifecycle.phase_ended(_phase("test", "Failed"))
    lifecycle.phase_started(_phase("test"))  # run again with the same inputs
    lifecycle.phase_ended(_phase("test", "Succeeded"))
    assert records.record["status"]["state"] == "Operational"


class _Flaky(_Records):
    """A connection reset on the first read and the first write, as a blip does."""

    def __init__(self, status: Dict[str, Any]) -> None:
        super().__init__(status)
        self.resets = {"get": 1, "replace": 1}

    def _blip(self, call: str) -> None:
        if self.resets[call]:
            self.resets[call] -= 1
            raise ConnectionResetError(104, "Connection reset by peer")

    def get(self, name: str, namespace: str) -> _Obj:
        self._blip("get")
        return super().get(name, namespace)

    def replace(self, body: Dict[str, Any], namespace: str) -> _Obj:
        self._blip("replace")
        return super().replace(body, namespace)


def test_a_blip_on_the_record_is_retried_not_raised() -> None:
    records = _Flaky({"state": "Operational"})
    Lifecycle(_Dyn(records), "openstack", "keystone", "keystone").phase_ended(_phase("test", "Failed"))
    assert records.resets == {"get": 0, "replace": 0}
    assert records.record["status"]["state"] == "Failed"


class _Denied(_Records):
    def get(self, name: str, namespace: str) -> _Obj:
        import json

        from kubernetes.client.exceptions import ApiException
        from kubernetes.dynamic.exceptions import api_exception
        exc = ApiException(status=403, reason="Forbidden")
        exc.headers = {"Audit-Id": "5c1f"}
        exc.body = json.dumps({"kind": "Status", "code": 403, "reason": "Forbidden",
                               "message": 'servicelifecycles "keystone" is forbidden'}).encode()
        raise api_exception(exc)


def test_a_denied_read_is_said_with_what_was_denied_not_raised_raw() -> None:
    """Lifecycle.get caught only NotFound: a 403 escaped with its HTTP headers.
    It reads through kube/objects.get_or_none now, as every record does."""
    from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError
    lifecycle = Lifecycle(_Dyn(_Denied({})), "openstack", "keystone", "keystone")
    with pytest.raises(KubeError) as raised:
        lifecycle.get()
    assert "servicelifecycles" in str(raised.value) and "Audit-Id" not in str(raised.value)


def test_a_condition_moves_its_transition_time_only_when_its_status_changes() -> None:
    from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.record import set_condition

    status: Dict[str, Any] = {"conditions": [{"type": "Other", "status": "True", "lastTransitionTime": "t0"}]}
    set_condition(status, "DependenciesReady", False, "Waiting", "waiting for keystone (Installing)", "t1")
    set_condition(status, "DependenciesReady", False, "Waiting", "waiting for keystone (Testing)", "t2")
    assert status["conditions"][1] == {"type": "DependenciesReady", "status": "False", "reason": "Waiting",
                                       "message": "waiting for keystone (Testing)", "lastTransitionTime": "t1"}
    set_condition(status, "DependenciesReady", True, "Met", "met: keystone (Operational)", "t3")
    assert (status["conditions"][1]["status"], status["conditions"][1]["lastTransitionTime"]) == ("True", "t3")
    assert len(status["conditions"]) == 2 and status["conditions"][0]["lastTransitionTime"] == "t0"


class _Versioned:
    """One record with the apiserver's resourceVersion checks: a status replace
    on an older version is a 409, on a deleted record a 404; its reads counted.
    `meanwhile` is another writer's change, made just before our next write."""

    def __init__(self, status: Optional[Dict[str, Any]]) -> None:
        self.status = self
        self.version = 1
        self.record: Optional[Dict[str, Any]] = None
        if status is not None:
            self.record = {"metadata": {"name": "keystone", "namespace": "openstack", "resourceVersion": "1"},
                           "spec": {"service": "keystone", "release": "keystone"}, "status": status}
        self.reads = 0
        self.meanwhile: Optional[Any] = None

    def _stored(self, record: Optional[Dict[str, Any]]) -> _Obj:
        self.version += 1
        self.record = copy.deepcopy(record)
        if self.record is not None:
            self.record["metadata"]["resourceVersion"] = str(self.version)
        return _Obj(self.record)  # type: ignore[arg-type]

    def _other_writer(self) -> None:
        if self.meanwhile is not None:
            change, self.meanwhile = self.meanwhile, None
            self._stored(change(copy.deepcopy(self.record)))

    def get(self, name: str, namespace: str) -> _Obj:
        self.reads += 1
        if self.record is None:
            raise _not_found()
        return _Obj(self.record)

    def server_side_apply(self, body: Dict[str, Any], **_kw: Any) -> _Obj:
        self._other_writer()
        return self._stored(dict(copy.deepcopy(self.record or {}), **body))

    def replace(self, body: Dict[str, Any], namespace: str) -> _Obj:  # the status subresource
        from support.fake_leases import ConflictError, error
        self._other_writer()
        if self.record is None:
            raise _not_found()
        if body["metadata"]["resourceVersion"] != self.record["metadata"]["resourceVersion"]:
            raise error(ConflictError, 409)
        return self._stored(body)


def _not_found() -> Exception:
    import json

    from kubernetes.client.rest import ApiException
    from kubernetes.dynamic.exceptions import NotFoundError
    exc = ApiException(status=404, reason="Not Found")
    exc.body = json.dumps({"kind": "Status", "code": 404, "reason": "NotFound",
                           "details": {"name": "keystone", "kind": "servicelifecycles"}})
    return NotFoundError(exc)


def _a_run(records: _Versioned, ptype: str = "install") -> Lifecycle:
    """What a phase run does with its record: the running flow, then its start."""
    lifecycle = Lifecycle(_Dyn(records), "openstack", "keystone", "keystone")  # type: ignore[arg-type]
    lifecycle.running_flow()
    lifecycle.ensure()
    lifecycle.phase_started(_phase(ptype))
    return lifecycle


def test_a_run_reads_its_record_once_and_writes_what_fresh_reads_would() -> None:
    flow = {"name": "update", "state": "Running", "startedAt": "2026-11-23T09:00:00Z", "phases": []}
    records = _Versioned({"state": "Operational", "flow": flow})
    lifecycle = _a_run(records, "upgrade")
    assert records.reads == 1
    lifecycle.phase_ended(_phase("upgrade", "Succeeded"))
    assert records.reads == 1  # the end starts from what the start wrote
    again = _Versioned({"state": "Operational", "flow": flow})  # each step reading it afresh, as before
    Lifecycle(_Dyn(again), "openstack", "keystone", "keystone").phase_started(_phase("upgrade"))  # type: ignore[arg-type]
    Lifecycle(_Dyn(again), "openstack", "keystone", "keystone").phase_ended(_phase("upgrade", "Succeeded"))  # type: ignore[arg-type]
    assert records.record["status"] == again.record["status"]  # type: ignore[index]
    assert records.record["status"]["flow"]["phases"] == ["keystone-upgrade-1"]  # type: ignore[index]


def test_a_missing_record_is_read_again_right_before_the_apply_that_creates_it() -> None:
    """The apply carries no dependsOn: made on an old read, it would remove
    one that service_lifecycle set meanwhile."""
    records = _Versioned(None)
    _a_run(records)
    assert records.reads == 2
    assert records.record["status"]["currentPhase"] == "keystone-install-1"  # type: ignore[index]


def test_a_record_changed_since_it_was_read_is_read_again_and_both_changes_kept() -> None:
    records = _Versioned({"state": "Operational"})
    lifecycle = Lifecycle(_Dyn(records), "openstack", "keystone", "keystone")  # type: ignore[arg-type]
    lifecycle.running_flow()
    records.meanwhile = lambda r: dict(r, status=dict(r["status"], targetVersion="2025.2"))
    lifecycle.phase_started(_phase("test"))
    assert records.reads == 2  # the 409, then a read
    status = records.record["status"]  # type: ignore[index]
    assert status["targetVersion"] == "2025.2" and status["currentPhase"] == "keystone-test-1"


def test_a_record_deleted_since_it_was_read_is_created_again() -> None:
    records = _Versioned({"state": "Operational"})
    lifecycle = Lifecycle(_Dyn(records), "openstack", "keystone", "keystone")  # type: ignore[arg-type]
    lifecycle.ensure()
    records.record = None
    lifecycle.phase_started(_phase("test"))
    assert records.record["status"]["currentPhase"] == "keystone-test-1"  # type: ignore[index]


def test_nothing_to_write_is_decided_on_a_fresh_read_not_on_the_one_before() -> None:
    """Known as naming the Phase already, the record was changed since: the
    start is written all the same."""
    records = _Versioned({"state": "Operational"})
    lifecycle = Lifecycle(_Dyn(records), "openstack", "keystone", "keystone")  # type: ignore[arg-type]
    lifecycle.phase_started(_phase("test"))
    records.record["status"]["currentPhase"] = ""  # type: ignore[index]  # another writer, unseen
    lifecycle.phase_started(_phase("test"))  # an attach
    assert records.record["status"]["currentPhase"] == "keystone-test-1"  # type: ignore[index]


@pytest.mark.parametrize("in_flow", [True, False])
def test_a_rerun_of_a_succeeded_phase_reads_the_record_once(in_flow: bool) -> None:
    """The flow it joins is the one its Phase's name was made with (running_flow)."""
    flow = {"name": "update", "state": "Running", "startedAt": "2026-11-23T09:00:00Z", "phases": []}
    records = _Versioned({"state": "Operational", **({"flow": flow} if in_flow else {})})
    lifecycle = Lifecycle(_Dyn(records), "openstack", "keystone", "keystone")  # type: ignore[arg-type]
    lifecycle.running_flow()
    lifecycle.phase_found_done(_phase("test", "Succeeded"))
    assert records.reads == 1
    assert records.record["status"].get("flow", {}).get("phases") == (["keystone-test-1"] if in_flow else None)  # type: ignore[index]
    lifecycle.phase_found_done(_phase("test", "Succeeded"))  # joined already: nothing written
    assert records.version == (2 if in_flow else 1)


def test_a_rerun_joins_the_flow_as_it_is_when_the_record_changed_since() -> None:
    flow = {"name": "update", "state": "Running", "startedAt": "2026-11-23T09:00:00Z", "phases": []}
    records = _Versioned({"state": "Operational", "flow": flow})
    lifecycle = Lifecycle(_Dyn(records), "openstack", "keystone", "keystone")  # type: ignore[arg-type]
    lifecycle.running_flow()
    records.meanwhile = lambda r: dict(r, status=dict(r["status"], flow=dict(flow, state="Succeeded")))
    lifecycle.phase_found_done(_phase("test", "Succeeded"))  # the 409, then the flow read ended: nothing to join
    assert records.record["status"]["flow"] == dict(flow, state="Succeeded")  # type: ignore[index]
