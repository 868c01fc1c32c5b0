"""lcm.openstack.helm_release with Helm's ConfigMap storage driver
(HELM_DRIVER=configmap), Helm 3 and Helm 4, on the example keystone chart:
the module reads the release where Helm keeps it, and Helm agrees."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Dict

import pytest

from support import bed, kube
from support.ansible import run_module

CHART = str(kube.ROOT / "examples" / "charts" / "keystone")
CONFIGMAP = {"HELM_DRIVER": "configmap"}


@pytest.fixture(params=["helm3", "helm4"])
def helm(request: pytest.FixtureRequest) -> str:
    env_name = {"helm3": "HELM3_BIN", "helm4": "HELM4_BIN"}[request.param]
    return os.environ.get(env_name) or str(Path(bed.bed_var("BED_BIN")) / request.param)


def ok(result: Dict[str, Any]) -> Dict[str, Any]:
    assert result.get("failed") is None, result.get("msg")
    return result


def test_a_release_kept_in_configmaps_installs_upgrades_rolls_back_and_reruns_change_nothing(
        helm, kubeconfig, namespace, dyn) -> None:
    def release(**args: Any) -> Dict[str, Any]:
        full = {"name": "keystone", "namespace": namespace, "chart": CHART, "binary_path": helm, **args}
        return run_module("helm_release", full, kubeconfig, env=CONFIGMAP)

    def helm_history() -> Any:
        env = dict(os.environ, KUBECONFIG=kubeconfig, **CONFIGMAP)
        out = subprocess.run([helm, "history", "keystone", "--namespace", namespace, "--output", "json"],
                             env=env, capture_output=True, text=True, check=True).stdout
        return [(h["revision"], h["status"]) for h in json.loads(out)]

    def stored(kind: str) -> Any:
        items = dyn.resources.get(api_version="v1", kind=kind).get(
            namespace=namespace, label_selector="owner=helm,name=keystone").to_dict()["items"]
        return sorted(i["metadata"]["name"] for i in items)

    first = ok(release())
    assert (first["changed"], first["operation"], first["status"]["revision"]) == (True, "install", 1)
    assert stored("ConfigMap") == ["sh.helm.release.v1.keystone.v1"] and stored("Secret") == []
    # the deployed release is seen: nothing to do, and only `helm template` ran
    again = ok(release())
    assert (again["changed"], again["operation"], again["command"]) == (False, "none", "")

    up = ok(release(values={"pod": {"replicas": {"api": 2}}}))
    assert (up["changed"], up["operation"], up["status"]["revision"]) == (True, "upgrade", 2)
    assert ok(release(values={"pod": {"replicas": {"api": 2}}}))["changed"] is False

    back = ok(release(state="rolledback", revision=1))
    assert (back["changed"], back["status"]["revision"]) == (True, 3)
    assert ok(release(state="rolledback", revision=1))["changed"] is False
    assert ok(release())["changed"] is False  # revision 3 is revision 1 again: what is asked

    expected = [(1, "superseded"), (2, "superseded"), (3, "deployed")]
    assert [(h["revision"], h["status"]) for h in back["history"]] == expected
    assert helm_history() == expected  # Helm, with the same driver, says the same
    assert stored("ConfigMap") == [f"sh.helm.release.v1.keystone.v{r}" for r in (1, 2, 3)]
    assert stored("Secret") == []


def test_helm_driver_memory_is_refused_before_anything_is_installed(helm, kubeconfig, namespace, dyn) -> None:
    out = run_module("helm_release", {"name": "keystone", "namespace": namespace, "chart": CHART,
                                      "binary_path": helm}, kubeconfig, env={"HELM_DRIVER": "memory"})
    assert out["failed"] is True
    assert out["msg"].startswith("HELM_DRIVER=memory keeps a release only as long as one Helm process runs")
    deployments = dyn.resources.get(api_version="apps/v1", kind="Deployment").get(namespace=namespace).to_dict()
    assert deployments["items"] == []


def test_a_pending_configmap_revision_recorded_failed_is_one_helm_upgrades_from(
        helm, kubeconfig, namespace, dyn) -> None:
    """What helm_release writes when its Helm upgrade lost the apiserver
    (helm/storage.mark_failed), in the ConfigMap Helm keeps the release in:
    Helm reads it and upgrades past it."""
    from ansible_collections.lcm.openstack.plugins.module_utils.helm import storage

    def release(**args: Any) -> Dict[str, Any]:
        full = {"name": "keystone", "namespace": namespace, "chart": CHART, "binary_path": helm, **args}
        return ok(run_module("helm_release", full, kubeconfig, env=CONFIGMAP))

    release()
    configmaps = dyn.resources.get(api_version="v1", kind="ConfigMap")
    name = "sh.helm.release.v1.keystone.v1"
    record = storage.decode(configmaps.get(name=name, namespace=namespace).to_dict()["data"]["release"], "ConfigMap")
    record["info"]["status"] = "pending-upgrade"  # as an upgrade cut off while Helm wrote it leaves it
    configmaps.patch(name=name, namespace=namespace, content_type="application/merge-patch+json", body={
        "data": {"release": storage.encode(record, "ConfigMap")}, "metadata": {"labels": {"status": "pending-upgrade"}}})

    assert storage.mark_failed(dyn, namespace, "keystone", 1, "upgrade interrupted: connection reset by peer",
                               "ConfigMap")
    assert not storage.mark_failed(dyn, namespace, "keystone", 1, "again", "ConfigMap")  # failed now: left alone
    up = release(values={"pod": {"replicas": {"api": 2}}})
    assert (up["changed"], up["operation"], up["status"]["revision"]) == (True, "upgrade", 2)
    env = dict(os.environ, KUBECONFIG=kubeconfig, **CONFIGMAP)
    history = json.loads(subprocess.run([helm, "history", "keystone", "--namespace", namespace, "--output", "json"],
                                        env=env, capture_output=True, text=True, check=True).stdout)
    assert [(h["revision"], h["status"]) for h in history] == [(1, "superseded"), (2, "deployed")]
    assert history[0]["description"] == "upgrade interrupted: connection reset by peer"
