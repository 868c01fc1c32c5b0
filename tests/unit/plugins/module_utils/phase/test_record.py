"""phase_record.recorded: every way out of a phase's work leaves a Phase that
tells the truth, for phases and traffic moves alike."""

from __future__ import annotations

import os
import signal
from typing import Any, Dict, List

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.phase import record as phase_record
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError, PhaseFailed
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import Redactor


class _Writer:
    def __init__(self, broken: bool = False) -> None:
        self.phase: Dict[str, Any] = {"metadata": {"name": "keystone-install-1", "namespace": "openstack",
                                                   "uid": "u1"}, "status": {"state": "Running"}}
        self.redactor = Redactor()
        self.broken = broken  # the apiserver is gone: no write lands
        self.notes: List[str] = []
        self.under_way: Any = None

    def when_under_way(self, then: Any) -> None:
        self.under_way = then

    def decided(self) -> None:
        """The first wave applied: the work is under way."""
        then, self.under_way = self.under_way, None
        if then:
            then()

    def start(self) -> Dict[str, Any]:
        self.phase["status"] = {"state": "Running"}
        return self.phase

    def _write(self) -> None:
        if self.broken:
            raise ConnectionRefusedError(111, "Connection refused")

    def fail_with(self, exc: Exception, stopped: Any = ()) -> None:
        self._write()
        self.phase["status"] = {"state": "Failed", "message": str(exc)}

    def note(self, message: str) -> None:
        self._write()
        self.notes.append(message)


class _Lifecycle:
    def __init__(self) -> None:
        self.ended: List[str] = []
        self.started: List[str] = []

    def ensure(self) -> None:
        pass

    def phase_started(self, phase: Dict[str, Any]) -> None:
        self.started.append(phase["status"]["state"])

    def phase_ended(self, phase: Dict[str, Any]) -> None:
        self.ended.append(phase["status"]["state"])


class _NoJobs:
    """stop_jobs's view of the cluster: nothing to stop."""

    def __init__(self) -> None:
        self.resources = self

    def get(self, **_kw: Any) -> Any:
        return self

    def to_dict(self) -> Dict[str, Any]:
        return {"items": []}


@pytest.fixture(autouse=True)
def refreshes(monkeypatch: pytest.MonkeyPatch) -> List[str]:
    """The UpdateStatus refreshes the record makes, with the phase state at each."""
    from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus import keeper

    seen: List[str] = []
    monkeypatch.setattr(keeper, "refresh", lambda dyn: seen.append("refresh") or "")
    return seen


def _run(writer: _Writer, lifecycle: _Lifecycle, body: Any) -> PhaseFailed:
    with pytest.raises(PhaseFailed) as caught:
        with phase_record.recorded(_NoJobs(), writer, lifecycle, lambda: {"changed": True, "applied": 2}, []):
            body()
    return caught.value


def test_the_update_status_is_refreshed_once_the_work_is_under_way_and_when_it_ends(
        monkeypatch: pytest.MonkeyPatch, refreshes: List[str]) -> None:
    """Not before the first wave: the refresh reads every service's objects,
    and the phase's first Job does not wait for it."""
    from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus import keeper

    writer, lifecycle, warnings = _Writer(), _Lifecycle(), []  # type: ignore[var-annotated]
    with phase_record.recorded(_NoJobs(), writer, lifecycle, dict, warnings):
        assert refreshes == [] and lifecycle.started == ["Running"]
        writer.decided()
        assert refreshes == ["refresh"]
        writer.decided()  # the next waves: once is enough
        assert refreshes == ["refresh"]
        writer.phase["status"] = {"state": "Succeeded"}
        monkeypatch.setattr(keeper, "refresh", lambda dyn: "the UpdateStatus was not refreshed: 403")
    assert lifecycle.ended == ["Succeeded"] and warnings == ["the UpdateStatus was not refreshed: 403"]


@pytest.mark.parametrize("state, refreshed", [("Succeeded", ["under way"]), ("Failed", ["under way", "ended"])])
def test_a_success_can_leave_the_ends_refresh_to_the_flows_end_that_follows(
        monkeypatch: pytest.MonkeyPatch, state: str, refreshed: List[str]) -> None:
    """A traffic rollout that ends its flow in the same process: the flow's
    end refreshes once for both. A failure ends no flow and is refreshed here."""
    from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus import keeper

    seen: List[str] = []
    monkeypatch.setattr(keeper, "refresh", lambda dyn: seen.append("ended" if seen else "under way") or "")
    writer, lifecycle = _Writer(), _Lifecycle()
    with phase_record.recorded(_NoJobs(), writer, lifecycle, dict, [], refresh_if_succeeded=False):
        writer.decided()
        writer.phase["status"] = {"state": state}
    assert seen == refreshed and lifecycle.ended == [state]


def test_an_interrupted_run_is_not_ended_and_not_refreshed_again(refreshes: List[str]) -> None:
    writer = _Writer()

    def body() -> None:
        writer.decided()
        os.kill(os.getpid(), signal.SIGINT)
    _run(writer, _Lifecycle(), body)
    assert refreshes == ["refresh"]


def test_a_run_that_ends_before_its_work_is_under_way_is_refreshed_once(refreshes: List[str]) -> None:
    writer = _Writer()

    def body() -> None:
        raise PhaseError("the dry run refused Job keystone-db-sync")
    _run(writer, _Lifecycle(), body)
    assert refreshes == ["refresh"] and writer.under_way is None


def test_a_phase_error_fails_the_phase_and_ends_its_record() -> None:
    writer, lifecycle = _Writer(), _Lifecycle()

    def body() -> None:
        raise PhaseError("Job keystone-db-sync failed")
    failed = _run(writer, lifecycle, body)
    assert str(failed) == "Job keystone-db-sync failed" and failed.details == {"changed": True, "applied": 2}
    assert writer.phase["status"]["state"] == "Failed" and lifecycle.ended == ["Failed"]


def test_a_signal_leaves_the_phase_running_and_says_so() -> None:
    writer, lifecycle = _Writer(), _Lifecycle()
    failed = _run(writer, lifecycle, lambda: os.kill(os.getpid(), signal.SIGTERM))
    assert str(failed).startswith("interrupted by SIGTERM: the Phase keystone-install-1 stays Running")
    assert writer.notes == [str(failed)] and writer.phase["status"]["state"] == "Running"
    assert lifecycle.ended == [] and failed.details["changed"] is True


def test_a_bug_fails_the_phase_naming_it() -> None:
    writer, lifecycle = _Writer(), _Lifecycle()

    def body() -> None:
        raise KeyError("spec")
    failed = _run(writer, lifecycle, body)
    assert str(failed) == "the phase stopped on an unexpected error: KeyError: 'spec'"
    assert writer.phase["status"]["state"] == "Failed" and lifecycle.ended == ["Failed"]


def test_with_the_apiserver_gone_the_phase_stays_running_for_a_rerun_to_attach() -> None:
    writer, lifecycle = _Writer(broken=True), _Lifecycle()

    def body() -> None:
        raise ConnectionResetError(104, "Connection reset by peer")
    failed = _run(writer, lifecycle, body)
    assert str(failed) == ("the apiserver could not be reached for 60s ([Errno 104] Connection reset by peer); "
                           "the Phase keystone-install-1 could not be marked Failed ([Errno 111] Connection "
                           "refused) and stays Running: a re-run with the same inputs attaches to it")
    assert writer.phase["status"]["state"] == "Running" and lifecycle.ended == []


def test_a_failure_the_work_recorded_itself_is_passed_on_and_the_record_ended() -> None:
    writer, lifecycle = _Writer(), _Lifecycle()

    def body() -> None:
        writer.phase["status"] = {"state": "Failed", "message": "timed out"}
        raise PhaseFailed("timed out", changed=True)
    assert str(_run(writer, lifecycle, body)) == "timed out" and lifecycle.ended == ["Failed"]


class _Listed:
    def __init__(self, items: List[Dict[str, Any]]) -> None:
        self.items = items

    def get(self, namespace: str, label_selector: str) -> Any:
        assert label_selector == "lifecycle.openstack.org/service=keystone"
        return self

    def to_dict(self) -> Dict[str, Any]:
        return {"items": self.items}


def _phase(name: str, ptype: str, state: str) -> Dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"type": ptype}, "status": {"state": state}}


def test_another_running_phase_of_the_service_refuses_a_new_one() -> None:
    listed = _Listed([_phase("keystone-upgrade-1", "upgrade", "Running"), _phase("keystone-test-1", "test", "Failed")])
    with pytest.raises(PhaseError) as err:
        phase_record.refuse_concurrent(listed, "openstack", "keystone", ("keystone-test-2",), "moving its traffic")
    assert str(err.value) == ("Phase keystone-upgrade-1 (upgrade) is Running for keystone; wait for it to end, "
                              "or delete it, before moving its traffic")


def test_the_phase_itself_and_the_rollout_a_check_runs_inside_are_allowed() -> None:
    listed = _Listed([_phase("keystone-trafficrollout-1", "trafficrollout", "Running"),
                      _phase("keystone-test-check-1", "test", "Running")])
    phase_record.refuse_concurrent(listed, "openstack", "keystone",
                                   ("keystone-test-check-1", "keystone-trafficrollout-1"), "starting another")


class _Created:
    """A create that landed although its answer was lost: the second create meets 409."""

    def __init__(self, existing: Dict[str, Any]) -> None:
        self.existing = existing

    def create(self, body: Dict[str, Any], namespace: str) -> Any:
        from kubernetes.client.rest import ApiException
        from kubernetes.dynamic.exceptions import ConflictError
        raise ConflictError(ApiException(status=409, reason="Conflict"))

    def get(self, name: str, namespace: str) -> Any:
        return self

    def to_dict(self) -> Dict[str, Any]:
        return self.existing


def _body(spec_hash: str) -> Dict[str, Any]:
    return {"metadata": {"name": "keystone-install-1", "namespace": "openstack",
                         "labels": {"lifecycle.openstack.org/spec-hash": spec_hash}}}


def test_a_create_sent_again_finds_its_own_phase() -> None:
    mine = dict(_body("abc"), spec={})
    assert phase_record.create(_Created(mine), _body("abc"), "keystone") is mine


def test_a_phase_another_run_started_is_refused() -> None:
    theirs = dict(_body("abc"), status={"state": "Running"})
    with pytest.raises(PhaseError, match="another run created Phase keystone-install-1 for keystone at the same "
                                         r"moment \(Running\)"):
        phase_record.create(_Created(theirs), _body("abc"), "keystone")
