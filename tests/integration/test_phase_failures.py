"""A phase whose Job keeps failing, or whose pod cannot be scheduled, fails at
once and stops its Jobs (lcm.openstack.phase on the bed, through Ansible).

The Jobs are given as plain manifests, shaped as openstack-helm renders them:
restartPolicy OnFailure and backoffLimit 1000, so the Job itself would never
fail. The bed's fake kubelet fails a pod annotated bed.lcm.openstack.org/fail
with that text as its termination message.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import pytest

from support import bed_faults, kube
from support.ansible import run_module

GROUP = "lifecycle.openstack.org/v1alpha1"
PASSWORD = "not-a-real-db-password-5521"  # in the phase's Secret, so it must be masked


def _job(name: str, fail: Optional[str] = None, node_selector: Optional[Dict[str, str]] = None,
         duration: Optional[str] = None) -> Dict[str, Any]:
    pod: Dict[str, Any] = {"restartPolicy": "OnFailure", "containers": [
        {"name": "db-sync", "image": "registry.invalid/openstack/keystone:2025.1", "command": ["keystone-manage"],
         "envFrom": [{"secretRef": {"name": "svc-db"}}]}]}
    if node_selector:
        pod["nodeSelector"] = node_selector
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"backoffLimit": 1000, "template": {
                "metadata": {"annotations": {
                    **({"bed.lcm.openstack.org/fail": fail} if fail else {}),
                    **({"bed.lcm.openstack.org/duration": duration} if duration else {})}},
                "spec": pod}}}


SECRET = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "svc-db"},
          "stringData": {"DB_CONNECTION": f"mysql+pymysql://keystone:{PASSWORD}@mariadb/keystone"}}


def _args(ns: str, manifests: List[Dict[str, Any]], **extra: Any) -> Dict[str, Any]:
    return {"type": "install", "service": "svc", "namespace": ns, "name": "svc-install",
            "source": {"selection": "manifests", "manifests": manifests}, "timeout": 300, **extra}


def _live(dyn: Any, api_version: str, kind: str, ns: str, name: str) -> Dict[str, Any]:
    return dyn.resources.get(api_version=api_version, kind=kind).get(name=name, namespace=ns).to_dict()


@pytest.fixture
def ns(crds, namespace) -> str:
    return namespace


@pytest.mark.bed
def test_a_job_that_keeps_failing_fails_the_phase_and_is_suspended(dyn, kubeconfig, ns) -> None:
    said = f"db-sync: cannot connect to mariadb:3306 as keystone:{PASSWORD}"
    failing = _args(ns, [SECRET, _job("svc-db-sync", fail=said)], failure={"threshold": 2})
    result = run_module("phase", failing, kubeconfig)
    assert result["failed"] is True, result.get("msg")
    phase = result["phase"]
    assert (phase["state"], phase["failed_object"], phase["reason"]) == ("Failed", "Job/svc-db-sync", "FailureThreshold")
    msg = result["msg"]
    assert msg.startswith("Job svc-db-sync failed: 2 failed run(s) of its pods reached the failure threshold 2; "
                          "last: pod svc-db-sync-"), msg
    assert "container db-sync exited 1 (Error): db-sync: cannot connect to mariadb:3306 as keystone:********" in msg
    assert msg.endswith("(suspended Job svc-db-sync)"), msg
    assert phase["log_tail"] == "db-sync: cannot connect to mariadb:3306 as keystone:********"
    assert PASSWORD not in result["_raw"]

    # The Job is suspended, not left retrying; the Phase records how.
    assert [(s["name"], s["action"]) for s in phase["stopped_jobs"]] == [("svc-db-sync", "Suspended")]
    live = _live(dyn, GROUP, "Phase", ns, "svc-install")
    assert live["spec"]["failure"] == {"threshold": 2, "unschedulableGraceSeconds": 60}
    assert [(s["name"], s["action"]) for s in live["status"]["stoppedJobs"]] == [("svc-db-sync", "Suspended")]
    assert live["status"]["reason"] == "FailureThreshold" and PASSWORD not in str(live)
    # Run outside any flow, the failed phase leaves the service Failed, not Installing.
    record = _live(dyn, GROUP, "ServiceLifecycle", ns, "svc")["status"]
    assert (record["state"], record["currentPhase"], record["history"][-1]["result"]) == ("Failed", "", "Failed")
    job = _live(dyn, "batch/v1", "Job", ns, "svc-db-sync")
    assert job["spec"]["suspend"] is True
    kube.wait_for(dyn, "batch/v1", "Job", "svc-db-sync", ns,
                  lambda j: kube.condition(j, "Suspended") is not None and not (j.get("status") or {}).get("active"))

    # Running it again (here without the fault) deletes the Failed Phase and its
    # suspended Job, and starts afresh.
    again = run_module("phase", _args(ns, [SECRET, _job("svc-db-sync")]), kubeconfig)
    assert again.get("failed") is None, again.get("msg")
    assert again["phase"]["state"] == "Succeeded" and "stopped_jobs" not in again["phase"]
    rerun = _live(dyn, "batch/v1", "Job", ns, "svc-db-sync")
    assert rerun["metadata"]["uid"] != job["metadata"]["uid"] and not rerun["spec"].get("suspend")


def test_an_unschedulable_pod_fails_the_phase_after_the_grace(dyn, kubeconfig, ns) -> None:
    stuck = _job("svc-db-init", node_selector={"bed.lcm.openstack.org/no-such-node": "true"})
    result = run_module("phase", _args(ns, [SECRET, stuck], failure={"unschedulable_grace": 2}), kubeconfig)
    assert result["failed"] is True, result.get("msg")
    phase = result["phase"]
    assert (phase["failed_object"], phase["reason"]) == ("Job/svc-db-init", "Unschedulable")
    msg = result["msg"]
    assert msg.startswith("Job svc-db-init failed: pod svc-db-init-"), msg
    assert " unschedulable for " in msg and "didn't match Pod's node affinity/selector" in msg, msg
    assert [(s["name"], s["action"]) for s in phase["stopped_jobs"]] == [("svc-db-init", "Suspended")]
    assert _live(dyn, "batch/v1", "Job", ns, "svc-db-init")["spec"]["suspend"] is True


def _pods(dyn: Any, ns: str, job: str) -> List[Dict[str, Any]]:
    return dyn.resources.get(api_version="v1", kind="Pod").get(
        namespace=ns, label_selector=f"batch.kubernetes.io/job-name={job}").to_dict()["items"]


def _actions(result: Dict[str, Any]) -> Dict[str, str]:
    return {o["name"]: o["action"] for o in result["objects_applied"] if o["kind"] == "Job"}


@pytest.mark.bed
def test_the_same_inputs_after_a_failure_resume_the_phase(dyn, kubeconfig, ns) -> None:
    """db-init completed and slow was running when db-sync failed the phase.
    Run again with the same inputs once the cause is fixed, the Phase resumes:
    db-init is not run again, slow carries on, only db-sync starts anew."""
    jobs = [SECRET, _job("svc-db-init"), _job("svc-db-sync"), _job("svc-slow", duration="12s")]
    bed_faults.set_fault(dyn, ns, "svc-db-sync", "db-sync: mariadb is not there yet")
    failed = run_module("phase", _args(ns, jobs, failure={"threshold": 2}), kubeconfig)
    assert failed["failed"] is True and failed["phase"]["failed_object"] == "Job/svc-db-sync", failed.get("msg")
    assert {s["name"] for s in failed["phase"]["stopped_jobs"]} == {"svc-db-sync", "svc-slow"}
    before = {j: _live(dyn, "batch/v1", "Job", ns, j)["metadata"]["uid"]
              for j in ("svc-db-init", "svc-db-sync", "svc-slow")}
    phase_uid = _live(dyn, GROUP, "Phase", ns, "svc-install")["metadata"]["uid"]

    bed_faults.clear_fault(dyn, ns, "svc-db-sync")
    again = run_module("phase", _args(ns, jobs, failure={"threshold": 2}), kubeconfig)
    assert again.get("failed") is None, again.get("msg")
    assert again["changed"] is True and again["phase"]["state"] == "Succeeded"
    assert _actions(again) == {"svc-db-init": "unchanged", "svc-db-sync": "replaced", "svc-slow": "updated"}
    notes = {o["name"]: o.get("note") for o in again["objects_applied"]}
    assert notes["svc-db-sync"] == "failed the earlier run (FailureThreshold): created anew"
    assert notes["svc-slow"] == "suspended when the earlier run stopped: resumed"
    assert notes["svc-db-init"] == "complete in the earlier run: kept"

    live = _live(dyn, GROUP, "Phase", ns, "svc-install")
    assert live["metadata"]["uid"] == phase_uid  # the same Phase, not a new one
    assert live["status"]["state"] == "Succeeded" and not live["status"].get("stoppedJobs")
    after = {j: _live(dyn, "batch/v1", "Job", ns, j) for j in before}
    assert after["svc-db-init"]["metadata"]["uid"] == before["svc-db-init"]
    assert len(_pods(dyn, ns, "svc-db-init")) == 1  # ran once, in the first run
    assert after["svc-slow"]["metadata"]["uid"] == before["svc-slow"]
    assert after["svc-db-sync"]["metadata"]["uid"] != before["svc-db-sync"]
    assert all((kube.condition(j, "Complete") or {}).get("status") == "True" for j in after.values())
    # Only the new db-sync's pod is left: the failed one went with its Job.
    assert [p["metadata"]["labels"]["controller-uid"] for p in _pods(dyn, ns, "svc-db-sync")] == [
        after["svc-db-sync"]["metadata"]["uid"]]


@pytest.mark.bed
def test_a_timed_out_phase_run_again_resumes_its_jobs(dyn, kubeconfig, ns) -> None:
    """Out of time is not a failed Job: run again with a longer timeout, the
    suspended Job is resumed, not deleted and created anew."""
    jobs = [SECRET, _job("svc-db-sync", duration="8s")]
    timed_out = run_module("phase", _args(ns, jobs, timeout=2), kubeconfig)
    assert timed_out["failed"] is True and timed_out["phase"]["reason"] == "Timeout", timed_out.get("msg")
    uid = _live(dyn, "batch/v1", "Job", ns, "svc-db-sync")["metadata"]["uid"]

    again = run_module("phase", _args(ns, jobs, timeout=120), kubeconfig)
    assert again.get("failed") is None, again.get("msg")
    assert _actions(again) == {"svc-db-sync": "updated"}
    job = _live(dyn, "batch/v1", "Job", ns, "svc-db-sync")
    assert job["metadata"]["uid"] == uid and not job["spec"].get("suspend")
    assert (kube.condition(job, "Complete") or {}).get("status") == "True"
