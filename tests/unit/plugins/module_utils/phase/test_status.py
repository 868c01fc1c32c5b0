"""plugins/module_utils/phase/status.py: how a failed phase is written, its stopped Jobs included."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Dict, List

from ansible_collections.lcm.openstack.plugins.module_utils.phase.status import Failure, StatusWriter
from ansible_collections.lcm.openstack.plugins.module_utils.phase.summary import summary
from ansible_collections.lcm.openstack.plugins.module_utils.kube.readiness import Readiness
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import Redactor
from ansible_collections.lcm.openstack.plugins.module_utils.helm.render import Rendered
from ansible_collections.lcm.openstack.plugins.module_utils.kube.tracker import WaitResult

SECRET = "Db-Pass-0917"
PHASE = {"metadata": {"name": "keystone-install-1a2b3c4d", "namespace": "openstack", "uid": "u", "generation": 1},
         "spec": {"type": "install"}, "status": {"state": "Running"}}


class _Phases:
    def __init__(self) -> None:
        self.patches: List[Dict[str, Any]] = []
        self.status = self

    def patch(self, body: Dict[str, Any], **_kw: Any) -> Any:
        self.patches.append(body["status"])
        merged = dict(PHASE, status={**PHASE["status"], **body["status"]})
        return SimpleNamespace(to_dict=lambda: merged)


def _writer() -> tuple:
    redactor = Redactor()
    redactor.add_values({"password": SECRET})
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "keystone-db-sync"}}
    phases = _Phases()
    rendered = Rendered(obj=job, source="templates/job-db-sync.yaml")
    return StatusWriter(phases, dict(PHASE), [rendered], redactor), phases


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
    out = summary(writer.phase)
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


def test_the_status_says_which_objects_the_phase_owns_and_why() -> None:
    writer, phases = _writer()
    writer.start()
    assert "owned" not in phases.patches[-1]["objects"][0]  # not applied yet: nothing decided
    reason = ("created without an owner: Deployment/keystone-api (DEPENDENCY_JOBS) waits for it, so deleting "
              "the Phase must leave it")
    writer.decided([SimpleNamespace(kind="Job", name="keystone-db-sync", owned=False, reason=reason)])
    writer.progress({("Job", "keystone-db-sync"): Readiness("InProgress", "1 active")})
    (entry,) = phases.patches[-1]["objects"]
    assert entry == {"kind": "Job", "name": "keystone-db-sync", "state": "InProgress", "message": "1 active",
                     "owned": False, "reason": reason}
    writer.succeed()
    assert summary(writer.phase)["objects"][0]["reason"] == reason


def test_an_ownership_reason_is_bounded_and_masked() -> None:
    writer, phases = _writer()
    writer.decided([SimpleNamespace(kind="Job", name="keystone-db-sync", owned=True,
                                    reason=f"owned: {SECRET} " + "x" * 1000)])
    writer.succeed()
    (entry,) = phases.patches[-1]["objects"]
    assert entry["owned"] is True and entry["reason"].startswith("owned: ********")
    assert len(entry["reason"]) == 256 and SECRET not in str(phases.patches)


def test_a_backup_is_recorded_with_the_cronjob_it_was_made_from() -> None:
    writer, phases = _writer()
    source = {"cronjob": "mariadb-backup", "namespace": "openstack", "database": "keystone"}
    writer.backup_taken("keystone-2025-2-0a1b2c3d", source)
    assert phases.patches[-1] == {"backupRef": "keystone-2025-2-0a1b2c3d", "backupSource": source}
    out = summary(writer.phase)
    assert out["backup_ref"] == "keystone-2025-2-0a1b2c3d" and out["backup_source"] == source


def test_the_chart_own_backup_job_records_no_source() -> None:
    writer, phases = _writer()
    writer.backup_taken("keystone-2025-2-0a1b2c3d")
    assert phases.patches[-1] == {"backupRef": "keystone-2025-2-0a1b2c3d"}
    assert "backup_source" not in summary(writer.phase)
