"""plugins/module_utils/phase/status.py: how a failed phase is written, its
stopped Jobs included; the list of objects written once, in parts of a few
KiB, then only what changes, gathered while waiting and written at most every
INTERVAL seconds."""

from __future__ import annotations

import copy
import json
import re
from types import SimpleNamespace
from typing import Any, Dict, List

import pytest
from kubernetes.dynamic.exceptions import UnprocessibleEntityError

from ansible_collections.lcm.openstack.plugins.module_utils.phase import status as status_module
from ansible_collections.lcm.openstack.plugins.module_utils.phase.entries import BUDGET
from ansible_collections.lcm.openstack.plugins.module_utils.phase.diagnosis import Failure
from ansible_collections.lcm.openstack.plugins.module_utils.phase.status import INTERVAL, StatusWriter
from ansible_collections.lcm.openstack.plugins.module_utils.common.phase_view import describe_phase
from ansible_collections.lcm.openstack.plugins.module_utils.kube.readiness import Readiness
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import Redactor
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import parse_time
from ansible_collections.lcm.openstack.plugins.module_utils.helm.render import Rendered
from ansible_collections.lcm.openstack.plugins.module_utils.kube.tracker import WaitResult
from support import json_patch
from support.fake_leases import error

SECRET = "Db-Pass-0917"
PHASE = {"metadata": {"name": "keystone-install-1a2b3c4d", "namespace": "openstack", "uid": "u", "generation": 1,
                      "resourceVersion": "1"},
         "spec": {"type": "install"}, "status": {"state": "Running"}}


class _Phases:
    """The Phase's status subresource: merge patches and JSON patches applied
    as the apiserver does; each merge patch's status kept in `patches`, every
    write's body in `sent`."""

    def __init__(self) -> None:
        self.patches: List[Dict[str, Any]] = []
        self.sent: List[Any] = []
        self.phase = copy.deepcopy(PHASE)
        self.status = self
        self.refuse_json_patch = False

    def patch(self, body: Any, content_type: str, **_kw: Any) -> Any:
        self.sent.append(body)
        if content_type == "application/json-patch+json":
            try:
                if self.refuse_json_patch:
                    raise json_patch.PatchFailed("edited by hand")
                self.phase = json_patch.apply(self.phase, body)
            except json_patch.PatchFailed:
                raise error(UnprocessibleEntityError, 422) from None
        else:
            assert content_type == "application/merge-patch+json"
            self.patches.append(body["status"])
            merged = {**self.phase.get("status", {}), **body["status"]}
            self.phase["status"] = {k: v for k, v in merged.items() if v is not None}
        self.phase["metadata"]["resourceVersion"] = str(int(self.phase["metadata"]["resourceVersion"]) + 1)
        phase = copy.deepcopy(self.phase)
        return SimpleNamespace(to_dict=lambda: phase)

    def json_patches(self) -> List[List[Dict[str, Any]]]:
        return [b for b in self.sent if isinstance(b, list)]


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def clock(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    """The writer's time.monotonic, moved by the tests."""
    fake = _Clock()
    monkeypatch.setattr(status_module.time, "monotonic", fake)
    return fake


def _writer() -> tuple:
    redactor = Redactor()
    redactor.add_values({"password": SECRET})
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "keystone-db-sync"}}
    phases = _Phases()
    rendered = Rendered(obj=job, source="templates/job-db-sync.yaml")
    return StatusWriter(phases, copy.deepcopy(PHASE), [rendered], redactor), phases


def _crashing_pod() -> Dict[str, Any]:
    return {"metadata": {"name": "keystone-db-sync-x7k2p"}, "status": {"phase": "Running", "containerStatuses": [
        {"name": "db-sync", "restartCount": 3, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
         "lastState": {"terminated": {"exitCode": 1, "reason": "Error",
                                      "message": f"Traceback ...\naccess denied for keystone:{SECRET}"}}}]}}


def test_a_threshold_failure_is_written_with_its_exit_its_log_and_the_stopped_job() -> None:
    writer, phases = _writer()
    key = ("Job", "keystone-db-sync")
    state = Readiness("Failed", "3 failed run(s) of its pods reached the failure threshold 3; last: pod "
                      f"keystone-db-sync-x7k2p container db-sync exited 1 (Error): access denied for keystone:{SECRET}",
                      "FailureThreshold")
    job = {"kind": "Job", "metadata": {"name": "keystone-db-sync", "uid": "j"}}
    result = WaitResult({key: state}, {key: job}, failed=[key], pods={key: [_crashing_pod()]})
    dyn = SimpleNamespace()  # the pods come with the result: nothing is asked of the cluster
    failure = writer.diagnose(dyn, result, 600)
    assert failure == Failure("Job/keystone-db-sync", "FailureThreshold", "Job keystone-db-sync failed: " + state.message,
                              f"Traceback ...\naccess denied for keystone:{SECRET}")
    writer.fail(failure, [{"name": "keystone-db-sync", "action": "Suspended", "activePods": 1}])
    status = phases.patches[-1]
    assert status["state"] == "Failed" and status["reason"] == "FailureThreshold"
    assert status["failedObject"] == "Job/keystone-db-sync"
    assert status["message"].endswith("access denied for keystone:******** (suspended Job keystone-db-sync)")
    assert status["message"].startswith("Job keystone-db-sync failed: 3 failed run(s)")
    assert status["logTail"] == "Traceback ...\naccess denied for keystone:********"
    assert status["stoppedJobs"] == [{"name": "keystone-db-sync", "action": "Suspended", "activePods": 1}]
    assert SECRET not in str(phases.patches)
    out = describe_phase(writer.phase)
    assert out["stopped_jobs"] == [{"name": "keystone-db-sync", "action": "Suspended", "active_pods": 1}]


def test_a_failure_with_nothing_stopped_records_no_stopped_jobs() -> None:
    writer, phases = _writer()
    writer.fail_with(RuntimeError("boom"))
    assert phases.patches[-1]["stoppedJobs"] is None
    assert phases.patches[-1]["message"] == "boom"


def test_a_new_run_clears_the_stopped_jobs_of_the_last() -> None:
    writer, phases = _writer()
    writer.start()
    assert "stoppedJobs" in phases.patches[-1] and phases.patches[-1]["stoppedJobs"] is None


def test_the_status_says_which_objects_the_phase_owns_and_why(clock: _Clock) -> None:
    writer, phases = _writer()
    writer.start()
    assert "owned" not in phases.patches[-1]["objects"][0]  # not applied yet: nothing decided
    reason = ("created without an owner: Deployment/keystone-api (DEPENDENCY_JOBS) waits for it, so deleting "
              "the Phase must leave it")
    clock.now += INTERVAL
    writer.decided([SimpleNamespace(kind="Job", name="keystone-db-sync", owned=False, reason=reason)])
    clock.now += INTERVAL
    writer.progress({("Job", "keystone-db-sync"): Readiness("InProgress", "1 active")})
    writer.flush()  # the waiter, the write being due
    (entry,) = writer.phase["status"]["objects"]
    assert entry == {"kind": "Job", "name": "keystone-db-sync", "state": "InProgress", "message": "1 active",
                     "owned": False, "reason": reason}
    writer.succeed()
    assert describe_phase(writer.phase)["objects"][0]["reason"] == reason


def test_an_ownership_reason_is_bounded_and_masked() -> None:
    writer, phases = _writer()
    writer.start()
    writer.decided([SimpleNamespace(kind="Job", name="keystone-db-sync", owned=True,
                                    reason=f"owned: {SECRET} " + "x" * 1000)])
    writer.succeed()
    (entry,) = writer.phase["status"]["objects"]
    assert entry["owned"] is True and entry["reason"].startswith("owned: ********")
    assert len(entry["reason"]) == 256 and SECRET not in str(phases.sent)


def _many(count: int) -> tuple:
    jobs = [Rendered(obj={"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": f"keystone-job-{n:03d}"}},
                     source="templates/jobs.yaml") for n in range(count)]
    phases = _Phases()
    return StatusWriter(phases, copy.deepcopy(PHASE), jobs, Redactor()), phases


def _run_jobs(writer: StatusWriter, clock: _Clock, count: int) -> None:
    """Every Job seen active, then each completing, one watch event each,
    a tenth of INTERVAL apart, the waiter flushing when a write is due."""
    writer.start()
    writer.decided([SimpleNamespace(kind="Job", name=f"keystone-job-{n:03d}", owned=True, reason="owned: its Job")
                    for n in range(count)])
    events = [(n, Readiness("InProgress", "1 active")) for n in range(count)] + \
        [(n, Readiness("Current", "1/1 succeeded")) for n in range(count)]
    for n, state in events:
        clock.now += INTERVAL / 10
        due = writer.due()
        if due is not None and due <= clock.now:
            writer.flush()
        writer.progress({("Job", f"keystone-job-{n:03d}"): state})
    writer.succeed()


@pytest.mark.parametrize("count", [10, 50, 200])
def test_writes_grow_with_the_objects_not_with_their_square(clock: _Clock, count: int) -> None:
    """The list goes out in parts of at most BUDGET bytes (the start, then
    appended with the first wave's decisions); then each write carries the
    entries that changed since the last one, so the bytes grow linearly with
    the objects, no write is larger than a few KiB whatever their number, and
    the writes follow the time the changes take, not their number."""
    writer, phases = _many(count)
    _run_jobs(writer, clock, count)
    sizes = [len(json.dumps(b)) for b in phases.sent]
    # The entries (about 200 bytes each with their ownership), then two changes an
    # object (active, then succeeded), each its state and message (about 90 bytes an
    # operation), and what each write carries besides (counts, message, a test).
    assert sum(sizes) < count * (200 + 2 * 2 * 100) + len(sizes) * 400
    assert max(sizes) < BUDGET + 1024
    parts = -(-count * 200 // BUDGET)  # the list and its decisions, in parts
    assert len(sizes) <= 2 * count / 10 + 2 * parts + 4  # at most one write every tenth event, then the end
    final = writer.phase["status"]
    assert [o["state"] for o in final["objects"]] == ["Current"] * count
    assert [o["name"] for o in final["objects"]] == [f"keystone-job-{n:03d}" for n in range(count)]
    assert all(o["owned"] for o in final["objects"])
    assert final["counts"] == {"total": count, "Current": count} and final["state"] == "Succeeded"


def test_the_start_writes_the_first_entries_and_the_wave_the_rest(clock: _Clock) -> None:
    writer, phases = _many(200)
    writer.start()
    listed = len(phases.patches[0]["objects"])
    assert 0 < listed < 200 and writer.phase["status"]["counts"] == {"total": 200, "NotFound": 200}
    assert writer.due() is not None  # the rest is owed
    writer.decided([SimpleNamespace(kind="Job", name="keystone-job-000", owned=True, reason="owned: its Job")])
    objects = writer.phase["status"]["objects"]
    assert len(objects) == 200 and objects[0]["owned"] and "owned" not in objects[1]
    assert all(op["op"] == "test" for ops in phases.json_patches() for op in ops[:1]
               if any(o["path"].endswith("/-") for o in ops))


def test_an_append_sent_twice_is_refused_and_the_list_written_again(clock: _Clock) -> None:
    """A blip after an append landed: sent again, it would list its entries
    twice; its test of the resourceVersion fails (422), and the list is
    written again from its start."""
    writer, phases = _many(100)
    writer.start()
    real = phases.patch

    def landed_then_cut(body: Any, content_type: str, **kw: Any) -> Any:
        answer = real(body, content_type, **kw)
        if isinstance(body, list) and len(phases.json_patches()) == 1:
            return real(body, content_type, **kw)  # the answer lost: the client sends it again
        return answer

    phases.patch = landed_then_cut
    writer.flush()
    objects = writer.phase["status"]["objects"]
    assert [o["name"] for o in objects] == [f"keystone-job-{n:03d}" for n in range(100)]
    assert len(phases.patches) == 2  # the start, and the start again after the refusal


def test_changes_seen_within_the_interval_wait_for_the_waiter(clock: _Clock) -> None:
    writer, phases = _many(3)
    writer.start()
    clock.now += INTERVAL
    writer.progress({("Job", "keystone-job-000"): Readiness("InProgress", "1 active")})
    assert writer.due() == clock.now  # due at once: the interval had passed; the waiter writes it
    writer.flush()
    written = len(phases.sent)
    writer.progress({("Job", "keystone-job-001"): Readiness("InProgress", "1 active")})
    assert len(phases.sent) == written and writer.due() == clock.now + INTERVAL - 0  # waits
    clock.now += INTERVAL
    writer.flush()
    (ops,) = phases.json_patches()[-1:]
    assert {"op": "add", "path": "/status/objects/1/state", "value": "InProgress"} in ops
    assert not [o for o in ops if o["path"].startswith("/status/objects/0/")]  # written before
    assert {"op": "add", "path": "/status/counts", "value": {"total": 3, "InProgress": 2, "NotFound": 1}} in ops
    assert writer.phase["status"]["message"] == "wave 1/1: waiting for Job keystone-job-000 (1 active) and 2 more"
    assert writer.due() is None


def test_the_message_written_tells_the_latest_states_of_the_wave(clock: _Clock) -> None:
    """Many changes within the interval: the MESSAGE line written says where
    the wave they were heard in is at the write; the next wave's start
    replaces it (one wave here: the count is the writer's own)."""
    writer, phases = _many(3)
    writer.start()
    clock.now += INTERVAL
    writer.progress({("Job", "keystone-job-000"): Readiness("InProgress", "1 active")})
    writer.progress({("Job", "keystone-job-000"): Readiness("Current", "1/1 succeeded"),
                     ("Job", "keystone-job-001"): Readiness("InProgress", "1 active")})
    writer.progress({("Job", "keystone-job-002"): Readiness("Current", "1/1 succeeded")})
    writer.wave = 1  # the next wave begins before its decisions are written
    clock.now += INTERVAL
    writer.flush()
    assert writer.phase["status"]["message"] == "wave 1/1: waiting for Job keystone-job-001 (1 active)"
    writer.progress({("Job", "keystone-job-001"): Readiness("Current", "1/1 succeeded")})
    writer.decided([])  # the wave's start replaces what waited to be written
    assert writer.phase["status"]["message"] == "wave 2/1: applied"


def test_the_end_writes_the_changes_not_yet_written_with_the_outcome_in_one_write(clock: _Clock) -> None:
    writer, phases = _many(2)
    writer.start()
    writer.decided([])
    written = len(phases.sent)
    writer.record(SimpleNamespace(states={("Job", "keystone-job-000"): Readiness("Current", "done"),
                                          ("Job", "keystone-job-001"): Readiness("Current", "done")}))
    writer.succeed()
    assert len(phases.sent) == written + 1 and isinstance(phases.sent[-1], list)
    status = writer.phase["status"]
    assert [o["state"] for o in status["objects"]] == ["Current", "Current"]
    assert status["state"] == "Succeeded" and status["counts"] == {"total": 2, "Current": 2}
    assert status["message"].startswith("2 object(s) Current in ")


def test_a_run_starts_and_ends_at_times_that_order_phases_within_one_second(clock: _Clock) -> None:
    """MicroTimes: two Phases of one service can start in the same second (a
    quick traffic rollout, then the flow's test), and oldest first must read
    right. A rerun keeps the first start."""
    writer = _many(1)[0]
    writer.start()
    writer.succeed()
    status = writer.phase["status"]
    started, completed = parse_time(status["startedAt"]), parse_time(status["completedAt"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", status["startedAt"]), status["startedAt"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", status["completedAt"]), status["completedAt"]
    assert started is not None and completed is not None and started <= completed
    first = status["startedAt"]
    writer.start()
    assert writer.phase["status"]["startedAt"] == first


def _fixed_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(status_module, "now", lambda: "2026-11-26T10:00:00Z")
    monkeypatch.setattr(status_module, "now_micro", lambda: "2026-11-26T10:00:00.000000Z")


@pytest.mark.parametrize("end", ["succeed", "fail", "fail_with"])
def test_the_end_in_one_write_leaves_the_status_the_changes_then_the_outcome_left(
        clock: _Clock, monkeypatch: pytest.MonkeyPatch, end: str) -> None:
    """The same Phase status as writing the changes, then the outcome by merge
    patch: a None removes what the Phase holds, and is no operation where
    it holds nothing."""
    _fixed_time(monkeypatch)
    finals, ends = [], []
    for flushed_first in (True, False):
        writer, phases = _many(3)
        writer.start()
        phases.phase["status"]["logTail"] = writer.phase["status"]["logTail"] = "an earlier tail"
        writer.decided([SimpleNamespace(kind="Job", name="keystone-job-000", owned=True, reason="owned: its Job")])
        writer.progress({("Job", "keystone-job-001"): Readiness("Failed", "BackoffLimitExceeded")})
        if flushed_first:
            writer.flush()
        written = len(phases.sent)
        if end == "succeed":
            writer.succeed()
        elif end == "fail":
            writer.fail(Failure("Job/keystone-job-001", "BackoffLimitExceeded", "it failed", ""),
                        [{"name": "keystone-job-002", "action": "Suspended", "activePods": 1}])
        else:
            writer.fail_with(RuntimeError("broken"))
        ends.append(len(phases.sent) - written)
        finals.append(phases.phase["status"])
    assert finals[0] == finals[1] and ends == [1, 1]
    assert "logTail" not in finals[1] if end != "succeed" else finals[1]["logTail"] == "an earlier tail"
    assert "failedObject" not in finals[1] or end == "fail"


def test_outcome_operations_do_what_its_merge_patch_does() -> None:
    from ansible_collections.lcm.openstack.plugins.module_utils.phase.entries import ObjectEntries

    ops = ObjectEntries.status_ops({"state": "Failed", "logTail": None, "stoppedJobs": None},
                                   {"state": "Running", "logTail": "x"})
    assert ops == [{"op": "add", "path": "/status/state", "value": "Failed"},
                   {"op": "remove", "path": "/status/logTail"}]


def test_an_end_that_does_not_fit_in_one_write_writes_the_changes_first(clock: _Clock) -> None:
    writer, phases = _many(200)
    writer.start()
    writer.decided([])
    writer.record(SimpleNamespace(states={("Job", f"keystone-job-{n:03d}"): Readiness("Current", "1/1 succeeded")
                                          for n in range(200)}))
    written = len(phases.sent)
    writer.succeed()
    assert len(phases.sent) - written > 2 and phases.patches[-1]["state"] == "Succeeded"
    assert writer.phase["status"]["counts"] == {"total": 200, "Current": 200}
    assert [o["state"] for o in writer.phase["status"]["objects"]] == ["Current"] * 200


def test_an_end_refused_in_one_write_is_written_as_the_list_then_the_outcome(clock: _Clock) -> None:
    writer, phases = _many(2)
    writer.start()
    writer.decided([])
    writer.record(SimpleNamespace(states={("Job", "keystone-job-001"): Readiness("Current", "done")}))
    phases.refuse_json_patch = True  # the list edited by hand
    writer.succeed()
    assert [o["state"] for o in phases.patches[-2]["objects"]] == ["NotFound", "Current"]
    assert phases.patches[-1]["state"] == "Succeeded" and writer.phase["status"]["state"] == "Succeeded"


def test_a_list_edited_by_hand_is_written_whole_again(clock: _Clock) -> None:
    writer, phases = _many(2)
    writer.start()
    phases.refuse_json_patch = True
    clock.now += INTERVAL
    writer.progress({("Job", "keystone-job-001"): Readiness("InProgress", "1 active")})
    writer.flush()
    assert [o["state"] for o in phases.patches[-1]["objects"]] == ["NotFound", "InProgress"]
    assert writer.due() is None


def test_a_phase_without_objects_writes_no_object_changes() -> None:
    phases = _Phases()
    writer = StatusWriter(phases, copy.deepcopy(PHASE), [], Redactor())
    writer.start()
    writer.note("selector applied")
    writer.succeeded("traffic back")
    assert phases.json_patches() == [] and len(phases.sent) == 3
    assert "counts" not in phases.patches[-1]


def test_a_backup_is_recorded_with_the_cronjob_it_was_made_from() -> None:
    writer, phases = _writer()
    source = {"cronjob": "mariadb-backup", "namespace": "openstack", "database": "keystone"}
    writer.backup_taken("keystone-2025-2-0a1b2c3d", source)
    assert phases.patches[-1] == {"backupRef": "keystone-2025-2-0a1b2c3d", "backupSource": source}
    out = describe_phase(writer.phase)
    assert out["backup_ref"] == "keystone-2025-2-0a1b2c3d" and out["backup_source"] == source


def test_the_chart_own_backup_job_records_no_source() -> None:
    writer, phases = _writer()
    writer.backup_taken("keystone-2025-2-0a1b2c3d")
    assert phases.patches[-1] == {"backupRef": "keystone-2025-2-0a1b2c3d"}
    assert "backup_source" not in describe_phase(writer.phase)


def test_a_note_is_also_a_progress_line_masked_when_the_run_has_lines() -> None:
    from ansible_collections.lcm.openstack.plugins.module_utils.progress.lines import WaitLines
    writer, phases = _writer()
    said: List[Any] = []
    writer.note("selector applied")  # no lines: the status only
    writer.lines = WaitLines("keystone trafficdrain", lambda text, level: said.append((level, text)),
                             writer.redactor.redact, deadline=300.0, clock=lambda: 0.0)
    writer.note(f"Service keystone-api gated; waiting for the EndpointSlices (password {SECRET})")
    assert said == [(0, "keystone trafficdrain: Service keystone-api gated; waiting for the EndpointSlices "
                        "(password ********), 300 s left")]
    assert phases.patches[-1]["message"].endswith("(password ********)")
