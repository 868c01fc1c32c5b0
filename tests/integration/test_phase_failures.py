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

from support import kube
from support.ansible import run_module

GROUP = "lifecycle.openstack.org/v1alpha1"
PASSWORD = "not-a-real-db-password-5521"  # in the phase's Secret, so it must be masked


def _job(name: str, fail: Optional[str] = None, node_selector: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    pod: Dict[str, Any] = {"restartPolicy": "OnFailure", "containers": [
        {"name": "db-sync", "image": "registry.invalid/openstack/keystone:2025.1", "command": ["keystone-manage"],
         "envFrom": [{"secretRef": {"name": "svc-db"}}]}]}
    if node_selector:
        pod["nodeSelector"] = node_selector
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"backoffLimit": 1000, "template": {
                "metadata": {"annotations": {"bed.lcm.openstack.org/fail": fail} if fail else {}},
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
