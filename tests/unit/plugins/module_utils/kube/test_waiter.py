"""plugins/module_utils/kube/waiter.py: _Tracker, the latest object and readiness of each waited-for target."""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any, Dict, Iterable, Optional, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.kube import readiness
from ansible_collections.lcm.openstack.plugins.module_utils.kube.failures import FailurePolicy
from ansible_collections.lcm.openstack.plugins.module_utils.kube.waiter import Target, _Tracker

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


def _tracker() -> _Tracker:
    return _Tracker([Target("batch/v1", "Job", "keystone-db-sync"), Target("batch/v1", "Job", "keystone-bootstrap"),
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
    t = _Tracker([Target("batch/v1", "Job", "a"), Target("batch/v1", "Job", "a", labelled=False)])
    assert list(t.states) == [("Job", "a")]


# -- the watch loop: resume after a watch ends, re-list on 410 Gone -------------

class _Res:
    kind, group_version, name = "Job", "batch/v1", "jobs"

    def __init__(self, lists):
        self.lists = list(lists)

    def get(self, **_kwargs):
        class _R:
            def __init__(self, data):
                self.data = data

            def to_dict(self):
                return self.data
        return _R(self.lists.pop(0))


class _Dyn:
    """Each call to watch() plays the next script: a list of events, or an HTTP status to fail with."""

    def __init__(self, scripts):
        self.scripts = list(scripts)
        self.resource_versions = []

    def watch(self, _res, resource_version=None, **_kwargs):
        self.resource_versions.append(resource_version)
        script = self.scripts.pop(0) if self.scripts else []
        if isinstance(script, int):
            from kubernetes.client.rest import ApiException

            raise ApiException(status=script, reason="Gone")
        if isinstance(script, Exception):
            raise script  # pylint: disable=raising-bad-type
        yield from script


def _raw_job(name, rv, complete=False):
    conds = [{"type": "Complete", "status": "True"}] if complete else []
    return {"kind": "Job", "apiVersion": "batch/v1",
            "metadata": {"name": name, "resourceVersion": rv}, "status": {"conditions": conds}}


def test_a_watch_resumes_from_the_last_resource_version_and_relists_on_410() -> None:
    import queue as _queue

    from ansible_collections.lcm.openstack.plugins.module_utils.kube.waiter import _KindWatch

    res = _Res([{"metadata": {"resourceVersion": "10"}, "items": []},
                {"metadata": {"resourceVersion": "30"}, "items": [_raw_job("db-sync", "30", complete=True)]}])
    dyn = _Dyn([
        [{"type": "ADDED", "raw_object": _raw_job("db-sync", "11")},
         {"type": "BOOKMARK", "raw_object": {"metadata": {"resourceVersion": "15"}}}],  # ends: resume at 15
        410,  # expired: list again
    ])
    events: "_queue.Queue" = _queue.Queue()
    w = _KindWatch(dyn, res, "ns", events, [("Job", "db-sync")])
    original = w._watch_from

    def watch_then_stop(rv):
        out = original(rv)
        if len(dyn.resource_versions) >= 2:
            w.stopped.set()
        return out
    w._watch_from = watch_then_stop
    w.run()
    kinds = []
    while not events.empty():
        kind, _w, payload = events.get()
        kinds.append((kind, [o["metadata"]["resourceVersion"] for o in payload]))
    assert dyn.resource_versions == ["10", "15"]  # resumed from the bookmark, not from the list
    assert kinds == [("LIST", []), ("ADDED", ["11"]), ("LIST", ["30"])]
    assert w.lists == 2


def _run_watch(lists, scripts, stop_after):
    """Run one kind's watch over scripted lists and watches; stop after `stop_after` lists."""
    import queue as _queue

    from ansible_collections.lcm.openstack.plugins.module_utils.kube import waiter

    res, dyn = _Res(lists), _Dyn(scripts)
    events: "_queue.Queue" = _queue.Queue()
    w = waiter._KindWatch(dyn, res, "ns", events, [("Job", "db-sync")])
    original = w._list

    def list_then_maybe_stop():
        out = original()
        if w.lists >= stop_after:
            w.stopped.set()
        return out
    w._list = list_then_maybe_stop
    waits = []
    w.stopped.wait = waits.append  # no real backoff in a unit test
    w.run()
    out = []
    while not events.empty():
        out.append(events.get())
    return w, out, waits


def test_a_dropped_connection_lists_again_and_carries_on() -> None:
    from urllib3.exceptions import ProtocolError

    cut = ProtocolError("Response ended prematurely")
    w, events, waits = _run_watch(
        [{"metadata": {"resourceVersion": "10"}, "items": []},
         {"metadata": {"resourceVersion": "12"}, "items": [_raw_job("db-sync", "12")]},
         {"metadata": {"resourceVersion": "30"}, "items": [_raw_job("db-sync", "30", complete=True)]}],
        [cut, ConnectionResetError(104, "Connection reset by peer")], stop_after=3)
    assert [kind for kind, _w, _p in events] == ["LIST", "BREAK", "LIST", "BREAK", "LIST"]
    assert events[1][2] is cut
    assert (w.lists, w.breaks) == (3, 2)
    assert waits == [0.5, 0.5]  # each break follows a good list: the backoff starts again


def test_an_apiserver_that_stays_away_backs_off_boundedly() -> None:
    from urllib3.exceptions import MaxRetryError, NewConnectionError

    refused = MaxRetryError(None, "/apis/batch/v1/jobs", NewConnectionError(None, "Connection refused"))

    class _Away(_Res):
        def __init__(self):
            super().__init__([])
            self.calls = 0

        def get(self, **_kwargs):
            self.calls += 1
            if self.calls <= 7:
                raise refused
            return super().get()

    import queue as _queue

    from ansible_collections.lcm.openstack.plugins.module_utils.kube import waiter

    res = _Away()
    res.lists = [{"metadata": {"resourceVersion": "40"}, "items": []}]
    events: "_queue.Queue" = _queue.Queue()
    w = waiter._KindWatch(_Dyn([]), res, "ns", events, [("Job", "db-sync")])
    waits = []
    w.stopped.wait = waits.append
    original = w._list

    def list_then_stop():
        out = original()
        w.stopped.set()
        return out
    w._list = list_then_stop
    w.run()
    assert waits == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert w.lists == 1


def test_a_terminal_answer_is_not_retried() -> None:
    from kubernetes.client.rest import ApiException

    forbidden = ApiException(status=403, reason="Forbidden")
    _w, events, waits = _run_watch([{"metadata": {"resourceVersion": "10"}, "items": []}],
                                   [forbidden], stop_after=99)
    assert [kind for kind, _w, _p in events] == ["LIST", "ERROR"]
    assert events[-1][2] is forbidden and waits == []


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


def _pod_tracker(clock: Any = None, **policy: Any) -> _Tracker:
    t = _Tracker([Target("batch/v1", "Job", "keystone-db-sync"), Target("batch/v1", "Job", "keystone-bootstrap")],
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
    t = _Tracker([Target("batch/v1", "Job", "keystone-db-sync")], FailurePolicy(threshold=2), _Clock())
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
