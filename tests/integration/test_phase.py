"""lcm.openstack.phase and phase_info against the real bed, through Ansible."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import pytest
from kubernetes import dynamic

from support import kube, runner_account
from support.ansible import run_module
from support.phase_args import GROUP, phase_args
PASSWORD = "not-a-real-admin-password"  # the chart's default DB password


def get(dyn: dynamic.DynamicClient, api_version: str, kind: str, namespace: str,
        name: Optional[str] = None, **kwargs: Any) -> Any:
    res = dyn.resources.get(api_version=api_version, kind=kind)
    if name:
        return res.get(name=name, namespace=namespace).to_dict()
    return res.get(namespace=namespace, **kwargs).to_dict()["items"]


def names(items: List[Dict[str, Any]]) -> List[str]:
    return sorted(i["metadata"]["name"] for i in items)


@pytest.fixture
def ns(crds, namespace) -> str:
    return namespace


def test_install_runs_its_jobs_in_waves_and_records_them(dyn, kubeconfig, ns) -> None:
    result = run_module("phase", phase_args(ns), kubeconfig)
    assert result.get("failed") is None, result.get("msg")
    assert result["changed"] is True
    phase = result["phase"]
    assert phase["state"] == "Succeeded" and phase["type"] == "install"
    assert {(o["kind"], o["name"], o["state"]) for o in phase["objects"]} >= {
        ("Job", "ks-db-init", "Current"), ("Job", "ks-db-sync", "Current"),
        ("Job", "ks-bootstrap", "Current"), ("Secret", "ks-db", "Current"),
        ("ConfigMap", "ks-etc", "Current")}
    # Only what the install templates use: no upgrade jobs, no unused ConfigMap.
    assert names(get(dyn, "batch/v1", "Job", ns)) == ["ks-bootstrap", "ks-db-init", "ks-db-sync"]
    assert "ks-unused" not in names(get(dyn, "v1", "ConfigMap", ns))

    live = get(dyn, GROUP, "Phase", ns, phase["name"])
    assert live["status"]["state"] == "Succeeded"
    assert kube.condition(live, "Ready")["status"] == "True"
    assert live["status"]["startedAt"] and live["status"]["completedAt"]
    assert live["status"]["specHash"] == phase["spec_hash"]
    assert "valuesDigest" in live["spec"]["source"] and "values" not in live["spec"]["source"]

    # Every object is owned by the Phase, under the collection's field manager.
    for kind, api in (("Job", "batch/v1"), ("Secret", "v1"), ("ConfigMap", "v1")):
        for obj in get(dyn, api, kind, ns, label_selector=f"lifecycle.openstack.org/phase={phase['name']}"):
            (owner,) = obj["metadata"]["ownerReferences"]
            assert (owner["kind"], owner["name"], owner["controller"]) == ("Phase", phase["name"], True)
            assert any(m["manager"] == "lcm.openstack" for m in obj["metadata"]["managedFields"])

    # Waves: db-init completed before db-sync started, db-sync before bootstrap.
    jobs = {j["metadata"]["name"]: j for j in get(dyn, "batch/v1", "Job", ns)}
    assert jobs["ks-db-sync"]["status"]["startTime"] >= jobs["ks-db-init"]["status"]["completionTime"]
    assert jobs["ks-bootstrap"]["status"]["startTime"] >= jobs["ks-db-sync"]["status"]["completionTime"]

    slc = get(dyn, GROUP, "ServiceLifecycle", ns, "svc")
    assert slc["status"]["currentVersion"] == "2025.1"
    assert [(h["name"], h["result"]) for h in slc["status"]["history"]] == [(phase["name"], "Succeeded")]


def test_the_same_phase_again_changes_nothing(dyn, kubeconfig, ns) -> None:
    first = run_module("phase", phase_args(ns), kubeconfig)
    uids = {j["metadata"]["name"]: j["metadata"]["uid"] for j in get(dyn, "batch/v1", "Job", ns)}
    again = run_module("phase", phase_args(ns), kubeconfig)
    assert again.get("failed") is None, again.get("msg")
    assert again["changed"] is False
    assert again["phase"]["name"] == first["phase"]["name"]
    assert names(get(dyn, GROUP, "Phase", ns)) == [first["phase"]["name"]]
    assert {j["metadata"]["name"]: j["metadata"]["uid"] for j in get(dyn, "batch/v1", "Job", ns)} == uids


def test_a_failing_job_fails_the_phase_with_its_name_and_reason(dyn, kubeconfig, ns) -> None:
    message = f"db-sync: cannot connect to mariadb:3306 as admin:{PASSWORD}"
    result = run_module("phase", phase_args(ns, values={"jobs": {"db_sync": {"fail": message}}}), kubeconfig)
    assert result["failed"] is True and result["changed"] is True
    assert result["msg"].startswith("Job ks-db-sync failed: BackoffLimitExceeded")
    phase = result["phase"]
    assert (phase["state"], phase["failed_object"], phase["reason"]) == \
        ("Failed", "Job/ks-db-sync", "BackoffLimitExceeded")
    assert phase["log_tail"] == "db-sync: cannot connect to mariadb:3306 as admin:********"
    # The wave after the failure never started.
    assert "ks-bootstrap" not in names(get(dyn, "batch/v1", "Job", ns))
    live = get(dyn, GROUP, "Phase", ns, phase["name"])
    assert live["status"]["failedObject"] == "Job/ks-db-sync"
    assert kube.condition(live, "Failed")["reason"] == "BackoffLimitExceeded"
    assert PASSWORD not in result["_raw"] and PASSWORD not in str(live)
    slc = get(dyn, GROUP, "ServiceLifecycle", ns, "svc")
    assert slc["status"]["history"][-1]["result"] == "Failed"


def test_an_interrupted_phase_is_resumed_not_restarted(dyn, kubeconfig, ns) -> None:
    slow = {"jobs": {"db_init": {"duration": "3s"}}}
    started = run_module("phase", phase_args(ns, values=slow, wait=False), kubeconfig)
    assert started["phase"]["state"] == "Running"
    assert names(get(dyn, "batch/v1", "Job", ns)) == ["ks-db-init"]  # only the first wave
    uid = get(dyn, "batch/v1", "Job", ns, "ks-db-init")["metadata"]["uid"]
    resumed = run_module("phase", phase_args(ns, values=slow), kubeconfig)
    assert resumed.get("failed") is None, resumed.get("msg")
    assert resumed["phase"]["name"] == started["phase"]["name"]
    assert resumed["phase"]["state"] == "Succeeded"
    assert {a["name"]: a["action"] for a in resumed["objects_applied"]}["ks-db-init"] == "unchanged"
    assert get(dyn, "batch/v1", "Job", ns, "ks-db-init")["metadata"]["uid"] == uid


def test_check_mode_reports_and_validates_without_writing(dyn, kubeconfig, ns) -> None:
    result = run_module("phase", phase_args(ns), kubeconfig, check=True, diff=True)
    assert result.get("failed") is None, result.get("msg")
    assert result["changed"] is True and result["phase"]["state"] == "Pending"
    assert {(a["kind"], a["name"], a["action"]) for a in result["objects_applied"]} >= {
        ("Job", "ks-db-sync", "created"), ("Secret", "ks-db", "created")}
    assert get(dyn, GROUP, "Phase", ns) == [] and get(dyn, "batch/v1", "Job", ns) == []
    secret_diff = next(d for d in result["diff"] if d["after_header"].startswith("Secret/ks-db"))
    assert "DB_CONNECTION: '********'" in secret_diff["after"]
    assert PASSWORD not in result["_raw"]


def test_check_mode_refuses_what_the_apiserver_would_refuse(kubeconfig, ns) -> None:
    bad = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Not_A_Valid_Name"}}
    result = run_module("phase", phase_args(ns, source={"manifests": [bad], "selection": "manifests"}),
                        kubeconfig, check=True)
    assert result["failed"] is True
    assert "the apiserver refused ConfigMap Not_A_Valid_Name: metadata.name" in result["msg"]


def test_deleting_a_phase_garbage_collects_its_objects(dyn, kubeconfig, ns) -> None:
    done = run_module("phase", phase_args(ns), kubeconfig)
    assert names(get(dyn, "batch/v1", "Job", ns))
    gone = run_module("phase", {"type": "install", "service": "svc", "namespace": ns, "state": "absent"},
                      kubeconfig)
    assert gone["changed"] is True and gone["deleted"] == [done["phase"]["name"]]
    # Foreground deletion: when the module returns, the dependents are gone.
    assert get(dyn, GROUP, "Phase", ns) == []
    assert get(dyn, "batch/v1", "Job", ns) == []
    assert "ks-db" not in names(get(dyn, "v1", "Secret", ns))
    again = run_module("phase", {"type": "install", "service": "svc", "namespace": ns, "state": "absent"},
                       kubeconfig)
    assert again["changed"] is False


def test_a_timeout_names_what_is_not_ready_and_why(kubeconfig, ns) -> None:
    slow = {"jobs": {"db_init": {"duration": "60s"}}}
    result = run_module("phase", phase_args(ns, values=slow, timeout=3), kubeconfig)
    assert result["failed"] is True
    assert result["phase"]["reason"] == "Timeout"
    assert result["msg"].startswith("timed out after 3s waiting for: Job ks-db-init: 0/1 succeeded, 1 active; "
                                    "pod ks-db-init-")
    assert "Running" in result["msg"]


def test_a_namespace_deleted_under_a_waiting_phase_ends_it_at_once(dyn, kubeconfig, crds) -> None:
    """The namespace goes while the phase waits for a 120 s Job: the module
    ends as soon as its Job is deleted, saying what was deleted, instead of
    waiting out its 600 s."""
    import threading
    import uuid

    namespace = f"t-ns-deleted-{uuid.uuid4().hex[:5]}"
    namespaces = dyn.resources.get(api_version="v1", kind="Namespace")
    namespaces.create(body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    kube.wait_for(dyn, "v1", "ServiceAccount", "default", namespace, lambda _: True, timeout=30)
    slow = {"jobs": {"db_init": {"duration": "120s"}}}
    out: Dict[str, Any] = {}
    run = threading.Thread(target=lambda: out.update(run_module("phase", phase_args(namespace, values=slow), kubeconfig)))
    run.start()
    kube.wait_for(dyn, "batch/v1", "Job", "ks-db-init", namespace, lambda _: True, timeout=120)
    namespaces.delete(name=namespace)
    run.join(timeout=120)
    assert not run.is_alive(), "the phase still waits with its namespace gone"
    assert out["failed"] is True
    assert (f"namespace {namespace} is being deleted" in out["msg"] or f"namespace {namespace} was deleted" in out["msg"]
            or "was deleted while it waited" in out["msg"] or "is being deleted while it waited" in out["msg"]), out["msg"]


def test_only_one_phase_runs_at_a_time_for_a_service(kubeconfig, ns) -> None:
    slow = {"jobs": {"db_init": {"duration": "60s"}}}
    running = run_module("phase", phase_args(ns, values=slow, wait=False), kubeconfig)
    other = run_module("phase", phase_args(ns, "test"), kubeconfig)
    assert other["failed"] is True
    assert other["msg"].startswith(f"Phase {running['phase']['name']} (install) is Running for svc")


def test_stage_and_annotation_selection(dyn, kubeconfig, ns) -> None:
    staged = run_module("phase", phase_args(ns, "upgrade", source={"selection": "stage",
                                                                   "templates": None}), kubeconfig)
    assert staged.get("failed") is None, staged.get("msg")
    assert "ks-stage-upgrade" in [o["name"] for o in staged["phase"]["objects"]]
    annotated = run_module("phase", phase_args(ns, "install", source={"selection": "annotation"}), kubeconfig)
    assert annotated.get("failed") is None, annotated.get("msg")
    assert [(o["kind"], o["name"], o["state"]) for o in annotated["phase"]["objects"]] == [
        ("Deployment", "ks-api", "Current")]
    dep = get(dyn, "apps/v1", "Deployment", ns, "ks-api")
    assert dep["status"]["availableReplicas"] == 1


@pytest.mark.parametrize("source, expect", [
    ({"chart": "/nonexistent/chart"}, "chart /nonexistent/chart does not exist"),
    ({"templates": ["job-db-synk"]}, "template templates/job-db-synk.yaml is not in the rendered chart"),
    ({"values": {"jobs": "not-a-mapping"}}, "helm template"),
], ids=["missing-chart", "unknown-template", "template-error"])
def test_bad_input_is_refused_before_anything_is_written(dyn, kubeconfig, ns, source, expect) -> None:
    result = run_module("phase", phase_args(ns, source=source), kubeconfig)
    assert result["failed"] is True
    assert expect in result["msg"]
    assert get(dyn, GROUP, "Phase", ns) == [] and get(dyn, "batch/v1", "Job", ns) == []


def test_phase_info_filters_phases_and_lifecycles(kubeconfig, ns) -> None:
    ok = run_module("phase", phase_args(ns), kubeconfig)
    run_module("phase", phase_args(ns, "test", values={"test": {"fail": "rally: 3 tests failed"}}), kubeconfig)
    info = run_module("phase_info", {"namespace": ns, "service": "svc"}, kubeconfig)
    assert [(p["type"], p["state"]) for p in info["phases"]] == [("install", "Succeeded"), ("test", "Failed")]
    failed = run_module("phase_info", {"namespace": ns, "state": "Failed"}, kubeconfig)
    assert [p["type"] for p in failed["phases"]] == ["test"]
    assert failed["phases"][0]["failed_object"] == "Pod/ks-test"
    (slc,) = info["lifecycles"]
    assert (slc["service"], slc["current_version"]) == ("svc", "2025.1")
    assert [h["name"] for h in slc["history"]][0] == ok["phase"]["name"]


def _service_account_env(dyn, kubeconfig: str, namespace: str, role_kind: str, role: str) -> Dict[str, str]:
    """A ServiceAccount bound to one role in `namespace`, as AWX's credential presents it."""
    get_res = dyn.resources.get
    get_res(api_version="v1", kind="ServiceAccount").create(namespace=namespace, body={
        "apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "lcm-runner"}})
    get_res(api_version="rbac.authorization.k8s.io/v1", kind="RoleBinding").create(namespace=namespace, body={
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "lcm-runner"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": "lcm-runner", "namespace": namespace}]})
    return runner_account.credential_env(dyn, kubeconfig, namespace, "lcm-runner")


def test_the_shipped_cluster_role_is_enough(dyn, kubeconfig, ns) -> None:
    """Bound in one namespace only, as a least-privilege setup would be."""
    env = _service_account_env(dyn, kubeconfig, ns, "ClusterRole", "lcm-openstack-phase")
    failing = {"jobs": {"db_sync": {"fail": "boom"}}}
    result = run_module("phase", phase_args(ns, values=failing), env=env)
    assert "phase" in result, result.get("msg")
    assert result["phase"]["state"] == "Failed" and result["phase"]["log_tail"] == "boom"
    result = run_module("phase", phase_args(ns), env=env)
    assert result.get("failed") is None, result.get("msg")
    assert result["phase"]["state"] == "Succeeded"
    info = run_module("phase_info", {"namespace": ns}, env=env)
    assert len(info["phases"]) == 2
    gone = run_module("phase", {"type": "install", "service": "svc", "namespace": ns, "state": "absent"}, env=env)
    assert gone.get("failed") is None, gone.get("msg")


def test_a_missing_permission_is_named(dyn, kubeconfig, ns) -> None:
    rules = kube.yaml_file(kube.ROOT / "roles" / "crds" / "files" / "rbac.yaml")["rules"]
    for rule in rules:
        if rule["resources"] == ["jobs"]:
            rule["verbs"] = ["get", "list", "watch"]
    dyn.resources.get(api_version="rbac.authorization.k8s.io/v1", kind="Role").create(namespace=ns, body={
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": "no-job-writes"}, "rules": rules})
    env = _service_account_env(dyn, kubeconfig, ns, "Role", "no-job-writes")
    result = run_module("phase", phase_args(ns), env=env)
    assert result["failed"] is True
    assert "may not patch jobs" in result["msg"] and "'batch'" in result["msg"]
    assert get(dyn, GROUP, "Phase", ns) == []


def test_an_unknown_type_and_values_that_are_not_a_mapping_are_refused(dyn, kubeconfig, ns) -> None:
    typo = run_module("phase", phase_args(ns, "instal"), kubeconfig)
    assert typo["failed"] is True
    assert "value of type must be one of: install, test, upgrade, rollback, uninstall" in typo["msg"]
    not_mapping = run_module("phase", phase_args(ns, values="replicas=3 and more"), kubeconfig)
    assert not_mapping["failed"] is True
    assert "argument 'values' is of type str" in not_mapping["msg"] and "convert to dict" in not_mapping["msg"]
    assert get(dyn, GROUP, "Phase", ns) == []
