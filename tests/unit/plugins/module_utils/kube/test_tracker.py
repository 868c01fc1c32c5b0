"""plugins/module_utils/kube/tracker.py: Tracker, the latest object and readiness of each waited-for target."""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any, Dict, Iterable, Optional, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.kube import readiness
from ansible_collections.lcm.openstack.plugins.module_utils.kube.failures import FailurePolicy
from ansible_collections.lcm.openstack.plugins.module_utils.kube.tracker import Target, Tracker

DB_SYNC = ("Job", "keystone-db-sync")
BOOTSTRAP = ("Job", "keystone-bootstrap")
BIN = ("ConfigMap", "keystone-bin")


def _watch(kind: str, group_version: str, covers: Iterable[Tuple[str, str]]) -> Any:
    return SimpleNamespace(res=SimpleNamespace(kind=kind, group_version=group_version), covers=set(covers))


def _job(name: str, condition: Optional[str] = None, active: int = 0) -> Dict[str, Any]:
    """A Job as a list returns it: without kind and apiVersion."""
    status: Dict[str, Any] = {"active": active} if active else {}
    if condition == "Complete":
        status.update(succeeded=1, conditions=[{"type": "Complete", "status": "True"}])
    elif condition == "Failed":
        status.update(failed=1, conditions=[{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                                             "message": "Job has reached the specified backoff limit"}])
    return {"metadata": {"name": name, "resourceVersion": "1"}, "spec": {"completions": 1}, "status": status}


def _tracker() -> Tracker:
    return Tracker([Target("batch/v1", "Job", "keystone-db-sync"), Target("batch/v1", "Job", "keystone-bootstrap"),
                    Target("v1", "ConfigMap", "keystone-bin", labelled=False)])


JOBS = _watch("Job", "batch/v1", [DB_SYNC, BOOTSTRAP])
CMS = _watch("ConfigMap", "v1", [BIN])


def test_every_target_starts_not_found() -> None:
    t = _tracker()
    assert {k: r.state for k, r in t.states.items()} == {
        DB_SYNC: readiness.NOT_FOUND, BOOTSTRAP: readiness.NOT_FOUND, BIN: readiness.NOT_FOUND}
    result = t.result()
    assert set(result.pending) == {DB_SYNC, BOOTSTRAP, BIN}
    assert result.objects == {} and result.failed == [] and not result.timed_out


def test_seen_sets_kind_and_api_version_and_assesses() -> None:
    t = _tracker()
    assert t.seen(JOBS, [_job("keystone-db-sync", "Complete"), _job("keystone-bootstrap", active=1)]) is True
    assert t.states[DB_SYNC].state == readiness.CURRENT
    assert t.states[BOOTSTRAP].state == readiness.IN_PROGRESS
    obj = t.objects[DB_SYNC]
    assert obj["kind"] == "Job" and obj["apiVersion"] == "batch/v1"
    assert t.result().pending == [BOOTSTRAP, BIN]


def test_seen_keeps_the_kind_an_object_carries() -> None:
    t = _tracker()
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "keystone-bin"}}
    t.seen(CMS, [obj])
    assert t.objects[BIN]["apiVersion"] == "v1"
    assert t.states[BIN].state == readiness.CURRENT


def test_seen_twice_unchanged_reports_no_change() -> None:
    t = _tracker()
    assert t.seen(JOBS, [_job("keystone-db-sync", active=1)]) is True
    assert t.seen(JOBS, [_job("keystone-db-sync", active=1)]) is False
    assert t.seen(JOBS, [_job("keystone-db-sync", "Complete")]) is True


def test_objects_that_are_not_targets_are_ignored() -> None:
    t = _tracker()
    before = copy.deepcopy(t.states)
    assert t.seen(JOBS, [_job("keystone-db-init", "Complete"), _job("other", "Failed")]) is False
    assert t.states == before and t.objects == {}


def test_same_name_of_another_kind_is_not_confused() -> None:
    t = _tracker()
    svc_watch = _watch("Service", "v1", [])
    assert t.seen(svc_watch, [{"metadata": {"name": "keystone-db-sync"}}]) is False
    assert t.states[DB_SYNC].state == readiness.NOT_FOUND


def test_failed_target_is_in_result_failed() -> None:
    t = _tracker()
    t.seen(JOBS, [_job("keystone-db-sync", "Failed"), _job("keystone-bootstrap", "Complete")])
    result = t.result()
    assert result.failed == [DB_SYNC]
    assert result.states[DB_SYNC].reason == "BackoffLimitExceeded"
    assert result.pending == [BIN]


def test_deleted_event_marks_not_found() -> None:
    t = _tracker()
    t.seen(JOBS, [_job("keystone-db-sync", "Complete")])
    assert t.seen(JOBS, [_job("keystone-db-sync", "Complete")], gone=True) is True
    assert t.states[DB_SYNC].state == readiness.NOT_FOUND
    assert DB_SYNC not in t.objects
    assert t.seen(JOBS, [_job("keystone-db-sync")], gone=True) is False


def test_full_list_without_a_covered_target_marks_it_not_found() -> None:
    t = _tracker()
    t.seen(JOBS, [_job("keystone-db-sync", "Complete"), _job("keystone-bootstrap", "Complete")])
    assert t.seen(JOBS, [_job("keystone-bootstrap", "Complete")], full_list=True) is True
    assert t.states[DB_SYNC].state == readiness.NOT_FOUND
    assert DB_SYNC not in t.objects
    assert t.states[BOOTSTRAP].state == readiness.CURRENT


def test_full_list_that_is_empty_marks_every_covered_target() -> None:
    t = _tracker()
    t.seen(JOBS, [_job("keystone-db-sync", "Complete"), _job("keystone-bootstrap", "Complete")])
    t.seen(CMS, [{"metadata": {"name": "keystone-bin"}}])
    assert t.seen(JOBS, [], full_list=True) is True
    assert t.states[DB_SYNC].state == t.states[BOOTSTRAP].state == readiness.NOT_FOUND
    # a target another watch covers is left alone
    assert t.states[BIN].state == readiness.CURRENT and BIN in t.objects


def test_full_list_of_already_missing_targets_is_no_change() -> None:
    t = _tracker()
    assert t.seen(JOBS, [], full_list=True) is False


def test_partial_update_does_not_mark_others_missing() -> None:
    t = _tracker()
    t.seen(JOBS, [_job("keystone-db-sync", "Complete"), _job("keystone-bootstrap", "Complete")])
    assert t.seen(JOBS, [_job("keystone-bootstrap", active=1)]) is True
    assert t.states[DB_SYNC].state == readiness.CURRENT


def test_result_is_a_snapshot() -> None:
    t = _tracker()
    t.seen(JOBS, [_job("keystone-db-sync", active=1)])
    snap = t.result(timed_out=True)
    assert snap.timed_out is True
    t.seen(JOBS, [_job("keystone-db-sync", "Complete")])
    assert snap.states[DB_SYNC].state == readiness.IN_PROGRESS
    assert t.result().states[DB_SYNC].state == readiness.CURRENT
    assert t.result().timed_out is False


def test_duplicate_targets_are_tracked_once() -> None:
    t = Tracker([Target("batch/v1", "Job", "a"), Target("batch/v1", "Job", "a", labelled=False)])
    assert list(t.states) == [("Job", "a")]


def _decided_by_scan(t: Tracker, fail_fast: bool) -> bool:
    """What the wait decides, from every state: what decided() keeps count of."""
    states = t.states.values()
    return (fail_fast and any(r.state == readiness.FAILED for r in states)) or all(r.terminal for r in states)


def test_decided_follows_the_states_both_ways() -> None:
    t = _tracker()
    steps = [
        (JOBS, [_job("keystone-db-sync", active=1)], False),
        (JOBS, [_job("keystone-db-sync", "Complete"), _job("keystone-bootstrap", "Failed")], False),
        (CMS, [{"metadata": {"name": "keystone-bin"}}], False),
        (JOBS, [_job("keystone-bootstrap", active=1)], False),  # a Failed one that is in progress again
        (JOBS, [_job("keystone-bootstrap", "Complete")], False),
        (JOBS, [_job("keystone-db-sync")], True),  # deleted: a Current one that is not found again
        (JOBS, [], True),
    ]
    for watch, items, gone in steps:
        t.seen(watch, items, gone=gone, full_list=not items)
        for fail_fast in (True, False):
            assert t.decided(fail_fast) == _decided_by_scan(t, fail_fast), (items, fail_fast)
    assert t.decided(True) is False and (t.open, t.failures) == (2, 0)


def test_decided_by_a_failure_only_when_failing_fast() -> None:
    t = _tracker()
    t.seen(JOBS, [_job("keystone-db-sync", "Failed")])
    assert t.decided(fail_fast=True) is True and t.decided(fail_fast=False) is False
    t.seen(JOBS, [_job("keystone-bootstrap", "Complete")])
    t.seen(CMS, [{"metadata": {"name": "keystone-bin"}}])
    assert t.decided(fail_fast=False) is True  # every target Current or Failed


def test_changes_are_every_state_at_first_then_only_what_moved() -> None:
    t = _tracker()
    assert {k: r.state for k, r in t.changes().items()} == {
        DB_SYNC: readiness.NOT_FOUND, BOOTSTRAP: readiness.NOT_FOUND, BIN: readiness.NOT_FOUND}
    assert t.changes() == {}
    t.seen(JOBS, [_job("keystone-db-sync", active=1), _job("keystone-bootstrap", active=1)])
    t.seen(JOBS, [_job("keystone-db-sync", "Complete")])
    t.seen(JOBS, [_job("keystone-bootstrap", active=1)])  # no change
    assert {k: r.state for k, r in t.changes().items()} == {
        DB_SYNC: readiness.CURRENT, BOOTSTRAP: readiness.IN_PROGRESS}  # the latest of each
    assert t.changes() == {}


def test_a_listener_told_the_changes_keeps_every_state() -> None:
    t = _tracker()
    kept: Dict[Any, Any] = {}
    for items in ([_job("keystone-db-sync", active=1)], [_job("keystone-bootstrap", "Failed")],
                  [_job("keystone-db-sync", "Complete")]):
        if t.seen(JOBS, items):
            kept.update(t.changes())
        assert kept == t.states


# -- the watch loop: resume after a watch ends, re-list on 410 Gone -------------

# -- the pods of the Jobs waited for ---------------------------------------------

JOB_PODS = SimpleNamespace(res=SimpleNamespace(kind="Pod", group_version="v1"), covers=set(), job_pods=True)


def _owned_job(name: str) -> Dict[str, Any]:
    job = _job(name, active=1)
    job["metadata"]["uid"] = f"uid-{name}"
    return job


def _pod(name: str, job: str, restarts: int = 0, unschedulable: bool = False) -> Dict[str, Any]:
    meta = {"name": name, "labels": {"batch.kubernetes.io/job-name": job},
            "ownerReferences": [{"kind": "Job", "name": job, "uid": f"uid-{job}", "controller": True}]}
    if unschedulable:
        return {"metadata": meta, "status": {"phase": "Pending", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
             "message": "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."}]}}
    last = {"terminated": {"exitCode": 1, "reason": "Error", "message": "cannot reach database"}} if restarts else {}
    return {"metadata": meta, "status": {"phase": "Running", "containerStatuses": [
        {"name": "db-sync", "restartCount": restarts, "state": {"running": {}}, "lastState": last}]}}


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _pod_tracker(clock: Any = None, **policy: Any) -> Tracker:
    t = Tracker([Target("batch/v1", "Job", "keystone-db-sync"), Target("batch/v1", "Job", "keystone-bootstrap")],
                FailurePolicy(**policy), clock or _Clock())
    t.seen(JOBS, [_owned_job("keystone-db-sync"), _owned_job("keystone-bootstrap")], full_list=True)
    return t


def test_restarts_heard_from_pod_events_fail_the_job_at_the_threshold() -> None:
    t = _pod_tracker()
    assert t.seen(JOB_PODS, [], full_list=True) is False
    assert t.seen(JOB_PODS, [_pod("keystone-db-sync-a", "keystone-db-sync", restarts=1)]) is True
    assert t.states[DB_SYNC].state == readiness.IN_PROGRESS
    assert "1 failed run(s), threshold 3" in t.states[DB_SYNC].message
    t.seen(JOB_PODS, [_pod("keystone-db-sync-a", "keystone-db-sync", restarts=3)])
    result = t.result()
    assert result.failed == [DB_SYNC] and result.states[DB_SYNC].reason == "FailureThreshold"
    assert "pod keystone-db-sync-a container db-sync exited 1 (Error): cannot reach database" in \
        result.states[DB_SYNC].message
    assert [p["metadata"]["name"] for p in result.pods[DB_SYNC]] == ["keystone-db-sync-a"]
    assert t.states[BOOTSTRAP].state == readiness.IN_PROGRESS  # another Job's state is its own


def test_a_pod_that_is_deleted_or_missing_from_a_relist_no_longer_counts() -> None:
    t = _pod_tracker()
    t.seen(JOB_PODS, [_pod("keystone-db-sync-a", "keystone-db-sync", restarts=2)])
    assert t.seen(JOB_PODS, [_pod("keystone-db-sync-a", "keystone-db-sync", restarts=2)], gone=True) is True
    assert "failed run" not in t.states[DB_SYNC].message
    t.seen(JOB_PODS, [_pod("keystone-db-sync-a", "keystone-db-sync", restarts=2)])
    assert t.seen(JOB_PODS, [], full_list=True) is True
    assert t.result().pods[DB_SYNC] == []


def test_pods_seen_before_their_job_count_once_it_arrives() -> None:
    t = Tracker([Target("batch/v1", "Job", "keystone-db-sync")], FailurePolicy(threshold=2), _Clock())
    assert t.seen(JOB_PODS, [_pod("keystone-db-sync-a", "keystone-db-sync", restarts=2)]) is False
    t.seen(JOBS, [_owned_job("keystone-db-sync")])
    assert t.states[DB_SYNC].reason == "FailureThreshold"


def test_an_unschedulable_pod_fails_its_job_when_the_grace_ends() -> None:
    clock = _Clock()
    t = _pod_tracker(clock, unschedulable_grace=30)
    assert t.next_check() is None
    t.seen(JOB_PODS, [_pod("keystone-db-sync-a", "keystone-db-sync", unschedulable=True)])
    assert t.states[DB_SYNC].state == readiness.IN_PROGRESS
    assert "Unschedulable: 0/1 nodes are available" in t.states[DB_SYNC].message
    assert t.next_check() == 130.0  # the waiter's next wake-up: no event needed
    clock.now = 120.0
    # a later event for the same pod does not restart the grace
    t.seen(JOB_PODS, [_pod("keystone-db-sync-a", "keystone-db-sync", unschedulable=True)])
    assert t.tick() is False and t.next_check() == 130.0
    clock.now = 130.0
    assert t.tick() is True
    state = t.states[DB_SYNC]
    assert (state.state, state.reason) == (readiness.FAILED, "Unschedulable")
    assert state.message.startswith("pod keystone-db-sync-a unschedulable for 30s: 0/1 nodes are available")
    assert t.next_check() is None  # a Failed target needs no wake-up


def test_a_pod_that_gets_scheduled_ends_its_grace() -> None:
    clock = _Clock()
    t = _pod_tracker(clock)
    t.seen(JOB_PODS, [_pod("keystone-db-sync-a", "keystone-db-sync", unschedulable=True)])
    t.seen(JOB_PODS, [_pod("keystone-db-sync-a", "keystone-db-sync")])
    assert t.next_check() is None
    clock.now = 1000.0
    assert t.tick() is False and t.states[DB_SYNC].state == readiness.IN_PROGRESS
