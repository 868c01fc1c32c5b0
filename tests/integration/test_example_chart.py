"""The example keystone chart (examples/charts/keystone) through the phase
engine and helm_release: openstack-helm's job layout, phase-only jobs, and
the failure switches, on the bed."""

from __future__ import annotations

from typing import Any, Dict

from support import kube
from support.ansible import run_module

CHART = str(kube.ROOT / "examples" / "charts" / "keystone")


def phase(ns: str, ptype: str, **extra: Any) -> Dict[str, Any]:
    args = {"type": ptype, "service": "keystone", "namespace": ns, "target_version": "2025.1",
            "source": {"chart": CHART}}
    args.update(extra)
    return args


def ok(result: Dict[str, Any]) -> Dict[str, Any]:
    assert result.get("failed") is None, result.get("msg")
    return result


def test_install_then_upgrade_with_a_backup_first(crds, kubeconfig, namespace) -> None:
    install = ok(run_module("phase", phase(namespace, "install"), kubeconfig))
    objects = [(o["kind"], o["name"]) for o in install["phase"]["objects"]]
    assert [name for kind, name in objects if kind == "Job"] == [
        "keystone-db-init", "keystone-db-sync", "keystone-bootstrap"]
    assert {("Secret", "keystone-db"), ("Secret", "keystone-admin"), ("ConfigMap", "keystone-bin"),
            ("ConfigMap", "keystone-etc"), ("Role", "keystone-db-sync"),
            ("RoleBinding", "keystone-db-sync")} <= set(objects)
    assert ("Job", "keystone-db-backup") not in objects  # a phase-only job: not at install
    upgrade = ok(run_module("phase", phase(namespace, "upgrade", target_version="2025.2",
                                           upgrade={"backup_database": True}), kubeconfig))
    jobs = [o["name"] for o in upgrade["phase"]["objects"] if o["kind"] == "Job"]
    assert jobs == ["keystone-db-backup", "keystone-db-sync"]
    assert all(o["state"] == "Current" for o in upgrade["phase"]["objects"])


def test_helm_installs_the_chart_and_its_tests_pass_then_fail_on_demand(kubeconfig, namespace) -> None:
    release = {"name": "keystone", "namespace": namespace, "chart": CHART}
    done = ok(run_module("helm_release", release, kubeconfig))
    assert done["status"]["status"] == "deployed" and done["status"]["chart"] == "keystone-0.1.0"
    assert ok(run_module("helm_release", dict(release, state="tested"), kubeconfig))["tests"][0]["phase"] \
        == "Succeeded"
    ok(run_module("helm_release", dict(release, values={"simulate": {"fail": {
        "rally_test": "keystone: token issue failed: 401"}}}), kubeconfig))
    failed = run_module("helm_release", dict(release, state="tested"), kubeconfig)
    assert failed["failed"] is True
    assert failed["tests"][0]["log_tail"] == "keystone: token issue failed: 401"
