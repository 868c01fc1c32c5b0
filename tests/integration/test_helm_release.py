"""lcm.openstack.helm_release and helm_release_info on the bed, with Helm 3 and Helm 4."""

from __future__ import annotations

import base64
import gzip
import json
import os
import socket
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict

import pytest
import yaml

from support import bed, kube, runner_account
from support.ansible import run_module

CHART = str(kube.ROOT / "tests" / "integration" / "charts" / "svc")
PASSWORD = "not-a-real-admin-password"
# Helm runs hook Jobs one after the other: keep one (db-sync), and make it quick.
LEAN = {"manifests": {"job_db_init": False, "job_bootstrap": False, "job_db_backup": False,
                      "job_db_restore": False, "job_db_drop": False},
        "jobs": {"db_sync": {"duration": "0s"}}}


def lean(values: Dict[str, Any]) -> Dict[str, Any]:
    out = json.loads(json.dumps(LEAN))
    for key, value in values.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            for k2, v2 in value.items():
                if isinstance(v2, dict) and isinstance(out[key].get(k2), dict):
                    out[key][k2] = {**out[key][k2], **v2}
                else:
                    out[key][k2] = v2
        else:
            out[key] = value
    return out


@pytest.fixture(params=["helm3", "helm4"])
def helm(request: pytest.FixtureRequest) -> str:
    env_name = {"helm3": "HELM3_BIN", "helm4": "HELM4_BIN"}[request.param]
    return os.environ.get(env_name) or str(Path(bed.bed_var("BED_BIN")) / request.param)


@pytest.fixture
def release(helm, kubeconfig, namespace):
    """Run helm_release for one release of the test chart in the test's namespace."""
    def run(check: bool = False, diff: bool = False, **args: Any) -> Dict[str, Any]:
        full = {"name": "rel", "namespace": namespace, "chart": CHART, "binary_path": helm}
        full.update(args)
        if full.get("state", "present") == "present":
            full["values"] = lean(full.get("values") or {})
        return run_module("helm_release", full, kubeconfig, check=check, diff=diff)
    run.namespace = namespace
    run.helm = helm
    return run


def helm_cli(release, *args: str) -> str:
    env = dict(os.environ)
    return subprocess.run([release.helm, *args, "--namespace", release.namespace], env=env,
                          capture_output=True, text=True, check=True).stdout


def ok(result: Dict[str, Any]) -> Dict[str, Any]:
    assert result.get("failed") is None, result.get("msg")
    return result


def test_install_waits_for_the_release_and_a_rerun_changes_nothing(release, dyn) -> None:
    first = ok(release(values={"replicas": 2}))
    assert (first["changed"], first["operation"]) == (True, "install")
    assert first["status"]["status"] == "deployed" and first["status"]["revision"] == 1
    assert first["status"]["chart"] == "svc-0.1.0"
    assert first["command"].startswith(f"{release.helm} upgrade rel {CHART} --install")
    # The module returned only once the Deployment was Available.
    dep = dyn.resources.get(api_version="apps/v1", kind="Deployment").get(
        name="rel-api", namespace=release.namespace).to_dict()
    assert dep["status"]["availableReplicas"] == 2
    again = ok(release(values={"replicas": 2}))
    assert (again["changed"], again["operation"], again["status"]["revision"]) == (False, "none", 1)


def test_changed_values_upgrade_and_history_records_it(release, dyn) -> None:
    ok(release())
    up = ok(release(values={"replicas": 3}, description="three replicas"))
    assert (up["changed"], up["operation"], up["status"]["revision"]) == (True, "upgrade", 2)
    assert [(h["revision"], h["status"]) for h in up["history"]] == [(1, "superseded"), (2, "deployed")]
    assert up["history"][-1]["description"] == "three replicas"
    dep = dyn.resources.get(api_version="apps/v1", kind="Deployment").get(
        name="rel-api", namespace=release.namespace).to_dict()
    assert dep["status"]["availableReplicas"] == 3


def test_objects_drifted_from_the_release_are_reported_then_applied_again(release, dyn) -> None:
    ok(release(values={"replicas": 1}))
    deployments = dyn.resources.get(api_version="apps/v1", kind="Deployment")
    # Edited out of band: the replicas the chart sets, and a label of the pod template.
    deployments.patch(name="rel-api", namespace=release.namespace, field_manager="kubectl-edit",
                      content_type="application/merge-patch+json",
                      body={"spec": {"replicas": 3, "template": {"metadata": {"annotations": {"by-hand": "yes"}}}}})
    same = ok(release(values={"replicas": 1}))
    assert (same["changed"], same["operation"]) == (False, "none") and "drift" not in same  # drift=ignore reads nothing
    reported = ok(release(values={"replicas": 1}, drift="report"))
    assert (reported["changed"], reported["operation"]) == (False, "none")
    # The annotation added by hand is no field the chart sets: only the replicas drifted.
    assert reported["drift"] == [{"kind": "Deployment", "name": "rel-api", "namespace": release.namespace,
                                  "fields": ["spec.replicas"], "missing": False}]
    ignored = ok(release(values={"replicas": 1}, drift="correct", drift_ignore=["Deployment/rel-api:spec.replicas"]))
    assert (ignored["changed"], ignored["drift"]) == (False, [])
    corrected = ok(release(values={"replicas": 1}, drift="correct"))
    assert (corrected["changed"], corrected["operation"], corrected["status"]["revision"]) == (True, "upgrade", 2)
    assert deployments.get(name="rel-api", namespace=release.namespace).to_dict()["spec"]["replicas"] == 1
    assert ok(release(values={"replicas": 1}, drift="correct"))["changed"] is False
    # Applied again by a client-side merge too (Helm 4's server_side=false, Helm 3's only way).
    deployments.patch(name="rel-api", namespace=release.namespace, field_manager="kubectl-edit",
                      content_type="application/merge-patch+json", body={"spec": {"replicas": 2}})
    client_side = ok(release(values={"replicas": 1}, drift="correct", server_side=False))
    assert (client_side["changed"], client_side["status"]["revision"]) == (True, 3)
    assert deployments.get(name="rel-api", namespace=release.namespace).to_dict()["spec"]["replicas"] == 1


def test_a_failed_atomic_upgrade_returns_to_the_previous_revision(release) -> None:
    ok(release(values={"replicas": 1}))
    failed = release(values={"replicas": 2, "jobs": {"db_sync": {"fail": "db-sync: schema error"}}},
                     atomic=True, timeout=60)
    assert failed["failed"] is True
    assert failed["msg"].startswith("upgrade of rel failed and Helm rolled it back (now revision 3")
    assert failed["status"]["status"] == "deployed" and failed["status"]["revision"] == 3
    assert json.loads(helm_cli(release, "get", "values", "rel", "-o", "json")) == lean({"replicas": 1})
    assert "stderr" in failed and "command" in failed


def test_rollback_to_revision_one_and_again_changes_nothing(release, dyn) -> None:
    ok(release(values={"replicas": 1}))
    ok(release(values={"replicas": 2}))
    back = ok(release(state="rolledback", revision=1))
    assert (back["changed"], back["rolled_back_to"], back["status"]["revision"]) == (True, 1, 3)
    assert back["history"][-1]["description"] == "Rollback to 1"
    dep = dyn.resources.get(api_version="apps/v1", kind="Deployment").get(
        name="rel-api", namespace=release.namespace).to_dict()
    assert dep["spec"]["replicas"] == 1 and dep["status"]["availableReplicas"] == 1
    assert ok(release(state="rolledback", revision=1))["changed"] is False
    missing = release(state="rolledback", revision=9)
    assert missing["failed"] is True
    assert "revision 9 of release rel does not exist; its history holds revisions 1, 2, 3" in missing["msg"]


def test_helm_test_passes_then_fails_with_the_pod_log(release) -> None:
    ok(release())
    passed = ok(release(state="tested"))
    assert passed["changed"] is False
    assert [(t["name"], t["phase"]) for t in passed["tests"]] == [("rel-test", "Succeeded")]
    ok(release(values={"test": {"fail": "rally: 2 of 12 tests failed"}}))
    failed = release(state="tested", timeout=60)
    assert failed["failed"] is True
    assert failed["msg"] == "helm test rel failed: rel-test (Failed)"
    (test,) = failed["tests"]
    assert test["phase"] == "Failed" and test["log_tail"] == "rally: 2 of 12 tests failed"


def test_uninstall_then_again_changes_nothing(release) -> None:
    ok(release())
    gone = ok(release(state="absent"))
    assert (gone["changed"], gone["operation"]) == (True, "uninstall")
    assert helm_cli(release, "list", "-q").strip() == ""
    assert ok(release(state="absent"))["changed"] is False


def test_check_mode_changes_nothing_and_diff_masks_secrets(release) -> None:
    would = ok(release(check=True, diff=True))
    assert (would["changed"], would["operation"]) == (True, "install")
    assert helm_cli(release, "list", "-q").strip() == ""
    assert "kind: Deployment" in would["diff"]["after"] and would["diff"]["before"] == ""
    assert "DB_CONNECTION: '********'" in would["diff"]["after"]
    assert PASSWORD not in would["_raw"]
    ok(release())
    change = ok(release(check=True, diff=True, values={"replicas": 4}))
    assert (change["changed"], change["operation"]) == (True, "upgrade")
    assert "replicas: 1" in change["diff"]["before"] and "replicas: 4" in change["diff"]["after"]
    assert json.loads(helm_cli(release, "history", "rel", "-o", "json"))[-1]["revision"] == 1


def test_no_secret_reaches_ansible_output_even_at_vvv(helm, kubeconfig, namespace, tmp_path) -> None:
    secret = "S3cr3t-Value-4242"
    other = "Another-S3cret-9999"
    playbook = tmp_path / "play.yml"
    playbook.write_text(f"""
- hosts: localhost
  gather_facts: false
  vars:
    common: &common {{name: rel, namespace: {namespace}, chart: {CHART}, binary_path: {helm}}}
  tasks:
    - lcm.openstack.helm_release:
        <<: *common
        secret_values: {{endpoints: {{oslo_db: {{auth: {{admin: {{password: {secret}}}}}}}}}}}
        values: {{conf: {{keystone: {{admin_password: {other}}}}}}}
      diff: true
    - lcm.openstack.helm_release_info: {{name: rel, namespace: {namespace}, binary_path: {helm}}}
    - lcm.openstack.helm_release:
        <<: *common
        secret_values: {{endpoints: {{oslo_db: {{auth: {{admin: {{password: {secret}}}}}}}}}}}
        values: {{replicas: -1, conf: {{keystone: {{admin_password: {other}}}}}}}
      ignore_errors: true
""")
    env = dict(os.environ, K8S_AUTH_KUBECONFIG=kubeconfig,
               ANSIBLE_COLLECTIONS_PATH=str(kube.ROOT / "build" / "collections"))
    proc = subprocess.run([str(Path(os.sys.executable).parent / "ansible-playbook"), "-vvv", str(playbook)],
                          capture_output=True, text=True, env=env, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "ok=3" in out or "ok=2" in out
    assert "values don't meet the specifications of the schema" in out  # the third task did run and fail
    assert secret not in out and other not in out
    assert base64.b64encode(secret.encode()).decode() not in out


@pytest.mark.parametrize("args, expect", [
    ({"chart": "/nonexistent/chart"}, "cannot be rendered"),
    ({"chart_version": "9.9.9"}, "is version 0.1.0, not 9.9.9"),
    ({"values": {"replicas": -1}}, "values don't meet the specifications of the schema"),
    ({"binary_path": "/nonexistent/helm"}, "helm binary not found (/nonexistent/helm)"),
], ids=["missing-chart", "bad-chart-version", "schema", "missing-helm"])
def test_bad_input_is_refused_and_changes_nothing(release, args, expect) -> None:
    ok(release())
    result = release(**args)
    assert result["failed"] is True and expect in result["msg"], result["msg"]
    assert json.loads(helm_cli(release, "history", "rel", "-o", "json"))[-1]["revision"] == 1


def test_a_helm_too_old_is_refused(release, tmp_path) -> None:
    old = tmp_path / "helm"
    old.write_text("#!/bin/sh\necho v3.2.0\n")
    old.chmod(0o755)
    result = release(binary_path=str(old))
    assert result["failed"] is True
    assert result["msg"].startswith(f"helm v3.2.0 at {old} is not supported")


def _set_release_status(dyn, namespace: str, name: str, revision: int, status: str) -> None:
    """Rewrite a release record the way an interrupted Helm leaves it."""
    secrets = dyn.resources.get(api_version="v1", kind="Secret")
    record = f"sh.helm.release.v1.{name}.v{revision}"
    secret = secrets.get(name=record, namespace=namespace).to_dict()
    blob = base64.b64decode(base64.b64decode(secret["data"]["release"]))
    rel = json.loads(gzip.decompress(blob))
    rel["info"]["status"] = status
    packed = base64.b64encode(base64.b64encode(gzip.compress(json.dumps(rel).encode()))).decode()
    secrets.patch(name=record, namespace=namespace, content_type="application/merge-patch+json",
                  body={"data": {"release": packed}, "metadata": {"labels": {"status": status}}})


def test_a_release_stuck_pending_is_reported_with_the_fix_not_cleared(release, dyn) -> None:
    ok(release())
    ok(release(values={"replicas": 2}))
    _set_release_status(dyn, release.namespace, "rel", 2, "pending-upgrade")
    result = release(values={"replicas": 3})
    assert result["failed"] is True
    assert result["msg"].startswith("release rel is pending-upgrade at revision 2")
    assert f"helm rollback rel 1 -n {release.namespace}" in result["msg"]
    history = json.loads(helm_cli(release, "history", "rel", "-o", "json"))
    assert [h["status"] for h in history] == ["superseded", "pending-upgrade"]


def test_a_revision_recorded_failed_after_a_lost_connection_is_one_helm_upgrades_from(release, dyn) -> None:
    """What helm_release does when its own Helm upgrade lost the apiserver
    and left the revision pending (helm/interrupted.py): the record it
    writes (helm/storage.mark_failed) is one real Helm reads and upgrades
    past, Helm 3 and Helm 4 alike."""
    from ansible_collections.lcm.openstack.plugins.module_utils.helm import storage

    ok(release())
    ok(release(values={"replicas": 2}))
    _set_release_status(dyn, release.namespace, "rel", 2, "pending-upgrade")
    assert storage.mark_failed(dyn, release.namespace, "rel", 2, "upgrade interrupted: connection reset by peer")
    assert not storage.mark_failed(dyn, release.namespace, "rel", 2, "again")  # failed now: left alone
    result = ok(release(values={"replicas": 3}))
    assert result["changed"] and result["operation"] == "upgrade"
    history = json.loads(helm_cli(release, "history", "rel", "-o", "json"))
    # Helm supersedes the failed revision as it does a deployed one; its description stays.
    assert [(h["revision"], h["status"]) for h in history] == [(1, "superseded"), (2, "superseded"), (3, "deployed")]
    assert history[1]["description"] == "upgrade interrupted: connection reset by peer"
    api = dyn.resources.get(api_version="apps/v1", kind="Deployment").get(name="rel-api", namespace=release.namespace)
    assert api.spec.replicas == 3


def test_release_info_masks_values_and_secrets(release) -> None:
    ok(release(values={"replicas": 2, "conf": {"db_password": "info-S3cret-77"}}))
    info = ok(run_module("helm_release_info", {"namespace": release.namespace, "binary_path": release.helm},
                         os.environ.get("KUBECONFIG")))
    (rel,) = info["releases"]
    assert rel["status"]["name"] == "rel" and rel["release_values"]["replicas"] == 2
    assert rel["release_values"]["conf"]["db_password"] == "********"
    assert "kind: Secret" in rel["manifest"] and PASSWORD not in rel["manifest"]
    assert "info-S3cret-77" not in info["_raw"]


def test_helm_wait_hands_the_wait_to_helm(release) -> None:
    done = ok(release(helm_wait=True))
    assert done["status"]["status"] == "deployed"
    flag = "--wait=watcher" if release.helm.endswith("4") else "--wait"
    assert flag in done["command"].split()


def _release_lease(dyn, namespace: str) -> Dict[str, Any]:
    return dyn.resources.get(api_version="coordination.k8s.io/v1", kind="Lease").get(
        name="lcm-helm-rel", namespace=namespace).to_dict()


@pytest.mark.parametrize("start", ["together", "while-pending"])
@pytest.mark.parametrize("operation", ["install", "upgrade"])
def test_two_runs_on_one_release_at_once_one_wins_the_other_names_it(release, dyn, operation, start) -> None:
    """Two runs on one release whose install (or upgrade) takes seconds (its
    db-sync hook runs 6 s): one wins untouched, the other is refused in one
    line and changes nothing, whether it got there before Helm wrote the
    release record (together) or found the record pending (while-pending),
    which before was called stuck, to be cleared with helm uninstall."""
    if operation == "upgrade":
        ok(release())
    revision = 1 if operation == "install" else 2
    slow = {"jobs": {"db_sync": {"duration": "6s"}}}
    with ThreadPoolExecutor(max_workers=2) as pool:
        first = pool.submit(release, values=dict(slow, replicas=2))
        if start == "while-pending":
            kube.wait_for(dyn, "v1", "Secret", f"sh.helm.release.v1.rel.v{revision}", release.namespace,
                          lambda o: o["metadata"]["labels"].get("status") == f"pending-{operation}")
        second = pool.submit(release, values=dict(slow, replicas=3))
        results = [first.result(), second.result()]
    won = [r for r in results if r.get("failed") is None]
    lost = [r for r in results if r.get("failed")]
    assert (len(won), len(lost)) == (1, 1), [r.get("msg") for r in results]
    msg = lost[0]["msg"]
    assert msg.startswith(f"another operation holds release rel: {socket.gethostname()}/"), msg
    assert f"(helm {operation}) since " in msg and f"(Lease lcm-helm-rel in {release.namespace})" in msg
    assert "Nothing was changed. Wait for it to end" in msg and "\n" not in msg
    assert "helm uninstall" not in msg and "helm rollback" not in msg
    if start == "while-pending":
        assert lost[0] is results[1]
        assert f"; meanwhile the release is pending-{operation} at revision {revision}. Nothing" in msg
    assert (won[0]["operation"], won[0]["status"]["revision"], won[0]["status"]["status"]) == (
        operation, revision, "deployed")
    history = json.loads(helm_cli(release, "history", "rel", "-o", "json"))
    assert [(h["revision"], h["status"]) for h in history] == (
        [(1, "deployed")] if operation == "install" else [(1, "superseded"), (2, "deployed")])
    # The winner's values, untouched by the loser.
    deployed = json.loads(helm_cli(release, "get", "values", "rel", "-o", "json"))
    assert deployed == lean(dict(slow, replicas=2 if won[0] is results[0] else 3))
    lease = _release_lease(dyn, release.namespace)
    assert "holderIdentity" not in lease["spec"], lease["spec"]
    assert lease["metadata"]["annotations"]["lifecycle.openstack.org/helm-operation"] == f"helm {operation}"


def test_the_runner_account_holds_the_release_lease(release, dyn, kubectl, kubeconfig) -> None:
    """helm_release as the documented runner (docs/rbac.md) may take and give
    back the release's Lease. Its ClusterRoles are bound through Roles of the
    same rules, read from the files the crds role ships, so the test touches
    nothing outside its namespace."""
    ns = release.namespace
    kubectl("create", "serviceaccount", runner_account.ACCOUNT, "-n", ns)
    for name in ("rbac.yaml", "rbac-release.yaml"):
        role = yaml.safe_load((bed.ROOT / "roles" / "crds" / "files" / name).read_text())
        body = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                "metadata": {"name": role["metadata"]["name"], "namespace": ns}, "rules": role["rules"]}
        dyn.resources.get(api_version="rbac.authorization.k8s.io/v1", kind="Role").create(body=body, namespace=ns)
        kubectl("create", "rolebinding", role["metadata"]["name"], "-n", ns, "--role", role["metadata"]["name"],
                "--serviceaccount", f"{ns}:{runner_account.ACCOUNT}")
    env = runner_account.credential_env(dyn, kubeconfig, ns)
    args = {"name": "rel", "namespace": ns, "chart": CHART, "binary_path": release.helm, "values": lean({})}
    done = ok(run_module("helm_release", args, None, env=env))
    assert (done["operation"], done["status"]["status"]) == ("install", "deployed")
    assert "holderIdentity" not in _release_lease(dyn, ns)["spec"]
    again = ok(run_module("helm_release", dict(args, values=lean({"replicas": 2})), None, env=env))
    assert (again["operation"], again["status"]["revision"]) == ("upgrade", 2)
