"""What a release leaves behind, on the bed: a kept hook Secret (as
openstack-helm's fernet and credential keys) survives an uninstall, is
adopted by the next install and deleted only by a purge; an uninstall whose
pre-delete hook never finishes ends at its timeout, without the hook (one
that Helm does not delete when it fails, so the module deletes it)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict

import pytest
import yaml

from support import bed
from support.ansible import run_module

DURATION = "bed.lcm.openstack.org/duration"

KEYS = {"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "rel-keys", "annotations": {
            "helm.sh/hook": "pre-install", "helm.sh/hook-delete-policy": "hook-failed",
            "helm.sh/resource-policy": "keep"}},
        "stringData": {"key": "first-install"}}
CONFIG = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "rel-conf"}, "data": {"a": "b"}}
CLEANUP = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "rel-cleanup", "annotations": {
               "helm.sh/hook": "pre-delete", "helm.sh/hook-delete-policy": "before-hook-creation"}},
           "spec": {"backoffLimit": 0, "template": {
               "metadata": {"annotations": {DURATION: "600s"}},
               "spec": {"restartPolicy": "Never",
                        "containers": [{"name": "main", "image": "registry.invalid/cleanup:1"}]}}}}


def chart(root: Path, *objects: Dict[str, Any]) -> str:
    path = root / "keep"
    (path / "templates").mkdir(parents=True)
    (path / "Chart.yaml").write_text("apiVersion: v2\nname: keep\nversion: 0.1.0\n")
    for index, obj in enumerate(objects):
        (path / "templates" / f"{index}.yaml").write_text(yaml.safe_dump(obj))
    return str(path)


def helm3() -> str:
    return os.environ.get("HELM3_BIN") or str(Path(bed.bed_var("BED_BIN")) / "helm3")


def run(kubeconfig: str, namespace: str, **args: Any) -> Dict[str, Any]:
    result = run_module("helm_release", {"name": "rel", "namespace": namespace, "binary_path": helm3(), **args},
                        kubeconfig)
    assert result.get("failed") is None, result.get("msg")
    return result


def secret(dyn: Any, namespace: str) -> Any:
    try:
        return dyn.resources.get(api_version="v1", kind="Secret").get(name="rel-keys", namespace=namespace)
    except Exception:  # noqa: BLE001 - NotFound
        return None


@pytest.mark.bed
def test_a_kept_hook_secret_is_adopted_by_the_next_install_and_only_a_purge_deletes_it(
        dyn, kubeconfig, namespace, tmp_path) -> None:
    path = chart(tmp_path, KEYS, CONFIG)
    assert "adopted" not in run(kubeconfig, namespace, chart=path)
    uid = secret(dyn, namespace).metadata.uid

    removed = run(kubeconfig, namespace, state="absent")
    assert removed["kept"] == ["Secret/rel-keys"] and removed["purged"] == []
    assert secret(dyn, namespace).metadata.uid == uid

    # Helm alone fails here ("secrets rel-keys already exists"); the module adopts it.
    again = run(kubeconfig, namespace, chart=path)
    assert (again["operation"], again["adopted"]) == ("install", ["Secret/rel-keys"])
    assert "--no-hooks" in again["command"] and again["status"]["status"] == "deployed"
    assert secret(dyn, namespace).metadata.uid == uid  # the same keys, not new ones

    purged = run(kubeconfig, namespace, state="absent", purge_kept=True)
    assert purged["purged"] == ["Secret/rel-keys"] and purged["kept"] == []
    assert secret(dyn, namespace) is None


@pytest.mark.bed
def test_an_uninstall_hung_in_its_pre_delete_hook_ends_without_it(dyn, kubeconfig, namespace, tmp_path) -> None:
    path = chart(tmp_path, CONFIG, CLEANUP)
    run(kubeconfig, namespace, chart=path)
    removed = run(kubeconfig, namespace, state="absent", timeout=5)
    assert removed["changed"] is True and removed["hooks_skipped"] is True
    assert removed["msg"].startswith("helm uninstall stopped in its delete hooks")
    assert removed["msg"].endswith("uninstalled with --no-hooks and deleted the hooks it left: Job/rel-cleanup")
    assert removed["status"] == {}  # the release is gone, not left uninstalling
    jobs = dyn.resources.get(api_version="batch/v1", kind="Job").get(namespace=namespace).to_dict()["items"]
    # Deleted in the background: gone, or going.
    assert all(j["metadata"].get("deletionTimestamp") for j in jobs), [j["metadata"]["name"] for j in jobs]
