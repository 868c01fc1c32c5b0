"""The UpdateStatus singleton during and after real flows on the bed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Optional

import pytest

from support import kube
from support.ansible import ROOT, run_module

CHART = str(ROOT / "examples" / "charts" / "keystone")
BIN = Path(sys.executable).parent


@pytest.fixture
def ns(crds, namespace) -> str:
    return namespace


def flow(kubeconfig: str, playbook: str, ns: str, version: str, values: Optional[Dict[str, Any]] = None,
         wait: bool = True) -> Any:
    env = dict(os.environ, KUBECONFIG=kubeconfig, K8S_AUTH_KUBECONFIG=kubeconfig, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0",
               ANSIBLE_COLLECTIONS_PATH=str(ROOT / "build" / "collections"))
    extra = {"service": "keystone", "namespace": ns, "chart": CHART, "version": version, "phase_timeout": 120,
             "values": values or {}}
    cmd = [str(BIN / "ansible-playbook"), "-i", str(ROOT / "examples" / "inventory.yml"),
           str(ROOT / "playbooks" / playbook), "-e", json.dumps(extra)]
    if wait:
        return subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def entry(status: Dict[str, Any], ns: str) -> Dict[str, Any]:
    (found,) = [s for s in status.get("services") or [] if s["namespace"] == ns and s["name"] == "keystone"]
    return found


def ours(status: Dict[str, Any], ns: str) -> list:
    return [i for i in status.get("insights") or [] if (i.get("scope") or {}).get("namespace") == ns]


def test_the_singleton_follows_an_update_and_explains_a_failure(dyn, kubeconfig, ns) -> None:
    done = flow(kubeconfig, "greenfield.yml", ns, "2025.1")
    assert done.returncode == 0, done.stdout[-3000:]

    # A slow db-sync: while it runs (keystone updates rolling, and its contract runs the
    # chart's db-sync once the old pods are gone), the singleton says Progressing, contract.
    running = flow(kubeconfig, "update.yml", ns, "2025.2", {"simulate": {"duration": {"db_sync": "25s"}}},
                   wait=False)
    try:
        seen = kube.wait_for(dyn, "lifecycle.openstack.org/v1alpha1", "UpdateStatus", "cluster", None,
                             lambda o: any(s["namespace"] == ns and s.get("currentPhase") == "contract"
                                           for s in (o.get("status") or {}).get("services") or []),
                             timeout=120)
    finally:
        out = running.communicate(timeout=300)[0]
    now = entry(seen["status"], ns)
    assert now["assessment"] == "Progressing", now
    assert now["versions"] == {"previous": "2025.1", "target": "2025.2"}
    assert 0 < now["completion"] < 100 and now.get("estimatedCompletionAt")
    # Its checks, then the upgrade (backup, expand, the release rolled), then the contract: no drain.
    assert [p["type"] for p in now["phases"]][:3] == ["check", "upgrade", "contract"]
    assert running.returncode == 0, out[-3000:]

    # Afterwards: Completed, and the report says no service is updating.
    result = run_module("update_status", {"details": "all"}, kubeconfig)
    assert result.get("failed") is None, result.get("msg")
    done_entry = entry(result["update_status"], ns)
    assert (done_entry["assessment"], done_entry["completion"]) == ("Completed", 100)
    singleton = dyn.resources.get(api_version="lifecycle.openstack.org/v1alpha1", kind="UpdateStatus").get(
        name="cluster").to_dict()
    assert entry(singleton["status"], ns)["assessment"] == "Completed"

    # A failing test: rolled back; the insights say why.
    failed = flow(kubeconfig, "update.yml", ns, "2025.3",
                  {"simulate": {"fail": {"rally_test": "identity tests: 3 of 12 failed"}}})
    assert failed.returncode == 2 and "rolled back to revision" in failed.stdout
    result = run_module("update_status", {"details": "health"}, kubeconfig)
    degraded = entry(result["update_status"], ns)
    assert degraded["assessment"] == "Degraded"
    insights = ours(result["update_status"], ns)
    assert any(i["impact"]["level"] in ("Error", "Critical") and "test" in i["impact"]["summary"]
               for i in insights), insights
    assert "keystone" in result["report"] and "identity tests: 3 of 12 failed" in result["report"]
    started = {i["uid"]: i["startedAt"] for i in insights}
    again = run_module("update_status", {"details": "none"}, kubeconfig)
    assert again.get("failed") is None, again.get("msg")
    assert {i["uid"]: i["startedAt"] for i in ours(again["update_status"], ns)} == started

    # The next successful update resolves them.
    fixed = flow(kubeconfig, "update.yml", ns, "2025.3")
    assert fixed.returncode == 0, fixed.stdout[-3000:]
    result = run_module("update_status", {"details": "none"}, kubeconfig)
    assert entry(result["update_status"], ns)["assessment"] == "Completed"
    assert not [i for i in ours(result["update_status"], ns) if i["uid"] in started]


def _services(status: Dict[str, Any], ns: str) -> list:
    return sorted(s["name"] for s in status.get("services") or [] if s["namespace"] == ns)


def test_service_lifecycle_refreshes_it_and_check_mode_writes_nothing(dyn, kubeconfig, ns) -> None:
    """service_lifecycle refreshes the UpdateStatus when it changes the record;
    a record written by anyone else shows in a check-mode run, which writes
    nothing."""
    res = dyn.resources.get(api_version="lifecycle.openstack.org/v1alpha1", kind="UpdateStatus")
    run_module("update_status", {"details": "none"}, kubeconfig)
    lifecycle = run_module("service_lifecycle", {"service": "glance", "namespace": ns}, kubeconfig)
    assert lifecycle.get("failed") is None, lifecycle.get("msg")
    assert _services(res.get(name="cluster").to_dict()["status"], ns) == ["glance"]
    before = res.get(name="cluster").to_dict()["metadata"]["resourceVersion"]
    # Written without the collection (kubectl, another tool): nothing refreshed it.
    dyn.resources.get(api_version="lifecycle.openstack.org/v1alpha1", kind="ServiceLifecycle").create(
        namespace=ns, body={"apiVersion": "lifecycle.openstack.org/v1alpha1", "kind": "ServiceLifecycle",
                            "metadata": {"name": "placement"}, "spec": {"service": "placement", "release": "placement"}})
    checked = run_module("update_status", {"details": "none"}, kubeconfig, check=True)
    assert checked["changed"] is True and _services(checked["update_status"], ns) == ["glance", "placement"]
    assert res.get(name="cluster").to_dict()["metadata"]["resourceVersion"] == before


def test_status_playbook_prints_the_report(kubeconfig, crds) -> None:
    env = dict(os.environ, KUBECONFIG=kubeconfig, K8S_AUTH_KUBECONFIG=kubeconfig, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0",
               ANSIBLE_COLLECTIONS_PATH=str(ROOT / "build" / "collections"))
    out = subprocess.run([str(BIN / "ansible-playbook"), "-i", str(ROOT / "examples" / "inventory.yml"),
                          str(ROOT / "playbooks" / "status.yml")], env=env, capture_output=True, text=True,
                         check=False)
    assert out.returncode == 0, out.stdout[-2000:]
    assert "TASK [Report]" in out.stdout and ("No service is updating." in out.stdout or "Assessment:" in out.stdout)


@pytest.mark.parametrize("kind", ["Secret", "ConfigMap"])  # Helm's default driver, and HELM_DRIVER=configmap
def test_a_release_left_pending_is_named_from_its_records_metadata(dyn, kubeconfig, ns, kind) -> None:
    """The refresh lists Helm's release records (Secrets, or ConfigMaps with
    HELM_DRIVER=configmap) in the apiserver's metadata-only form: a revision
    left pending-upgrade is still found, from its labels."""
    res = dyn.resources.get(api_version="lifecycle.openstack.org/v1alpha1", kind="UpdateStatus")
    assert run_module("service_lifecycle", {"service": "glance", "namespace": ns}, kubeconfig).get("failed") is None
    records = dyn.resources.get(api_version="v1", kind=kind)
    for version, status, modified in ((1, "deployed", "1700000000"), (2, "pending-upgrade", "1700000600")):
        body = {"apiVersion": "v1", "kind": kind,
                "metadata": {"name": f"sh.helm.release.v1.glance.v{version}",
                             "labels": {"owner": "helm", "name": "glance", "status": status,
                                        "version": str(version), "modifiedAt": modified}},
                "data": {"release": "SDRzSQ=="}}
        if kind == "Secret":
            body["type"] = "helm.sh/release.v1"
        records.create(namespace=ns, body=body)
    run_module("update_status", {"details": "none"}, kubeconfig)
    (pending,) = [i for i in ours(res.get(name="cluster").to_dict()["status"], ns) if i["uid"].startswith("releases-")]
    assert pending["impact"]["summary"] == "Helm release glance is pending-upgrade at revision 2"
    assert f"helm rollback glance 1 -n {ns}" in pending["impact"]["description"]
    assert pending["scope"]["resources"] == [{"kind": kind, "name": "sh.helm.release.v1.glance.v2", "namespace": ns}]
