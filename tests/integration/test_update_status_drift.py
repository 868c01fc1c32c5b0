"""Drift in the UpdateStatus on the bed: a Deployment of a release at rest
scaled by hand is an insight naming it and the field, kept with the time it
was first seen, until the Deployment is as the release deployed it again."""

from __future__ import annotations

from typing import Any, Dict, List

from support import kube
from support.ansible import run_module

CHART = str(kube.ROOT / "examples" / "charts" / "keystone")
GROUP = "lifecycle.openstack.org/v1alpha1"


def _ok(result: Dict[str, Any]) -> Dict[str, Any]:
    assert result.get("failed") is None, result.get("msg")
    return result


def _drift(kubeconfig: str, ns: str) -> List[Dict[str, Any]]:
    status = _ok(run_module("update_status", {"details": "health"}, kubeconfig))["update_status"]
    return [i for i in status.get("insights") or []
            if (i.get("scope") or {}).get("namespace") == ns and i["uid"].startswith("drift-")]


def test_a_deployment_scaled_by_hand_is_drift_until_scaled_back(crds, dyn, kubeconfig,
                                                                                  namespace) -> None:
    release = {"name": "keystone", "namespace": namespace, "chart": CHART}
    _ok(run_module("helm_release", release, kubeconfig))
    records = dyn.resources.get(api_version=GROUP, kind="ServiceLifecycle")
    records.create(namespace=namespace, body={"apiVersion": GROUP, "kind": "ServiceLifecycle",
                                              "metadata": {"name": "keystone"},
                                              "spec": {"service": "keystone", "release": "keystone"}})
    records.status.patch(name="keystone", namespace=namespace, content_type="application/merge-patch+json",
                         body={"status": {"state": "Operational", "currentVersion": "2025.1"}})
    assert _drift(kubeconfig, namespace) == []  # as deployed

    deployments = dyn.resources.get(api_version="apps/v1", kind="Deployment")
    replicas = deployments.get(name="keystone-api", namespace=namespace).to_dict()["spec"]["replicas"]
    deployments.patch(name="keystone-api", namespace=namespace, content_type="application/merge-patch+json",
                      body={"spec": {"replicas": replicas + 2}})
    (scaled,) = _drift(kubeconfig, namespace)
    assert scaled["scope"]["resources"] == [{"kind": "Deployment", "name": "keystone-api", "namespace": namespace}]
    assert "Deployment/keystone-api" in scaled["impact"]["summary"]
    assert "spec.replicas" in scaled["impact"]["summary"] and "unconfirmed" not in scaled["impact"]["description"]
    assert str(replicas + 2) not in scaled["impact"]["summary"] + scaled["impact"]["description"]

    # Refreshed again, by the module and by a phase's cheap refresh (no drift read): first seen as it was.
    assert _drift(kubeconfig, namespace) == [scaled]
    assert _ok(run_module("service_lifecycle", {"service": "glance", "namespace": namespace}, kubeconfig))
    singleton = dyn.resources.get(api_version=GROUP, kind="UpdateStatus").get(name="cluster").to_dict()
    assert [i for i in singleton["status"]["insights"] if i["uid"] == scaled["uid"]] == [scaled]
    assert _drift(kubeconfig, namespace) == [scaled]

    # Scaled back as the release sets it: the insight goes.
    deployments.patch(name="keystone-api", namespace=namespace, content_type="application/merge-patch+json",
                      body={"spec": {"replicas": replicas}})
    assert _drift(kubeconfig, namespace) == []
