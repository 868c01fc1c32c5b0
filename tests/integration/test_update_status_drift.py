"""Drift in the UpdateStatus on the bed: a Deployment of a release at rest
scaled by hand is an insight naming it and the field, kept with the time it
was first seen, until the Deployment is as the release deployed it again."""

from __future__ import annotations

import time
from typing import Any, Dict, List

from support import kube
from support.ansible import run_module

CHART = str(kube.ROOT / "examples" / "charts" / "keystone")
GROUP = "lifecycle.openstack.org/v1alpha1"
ATTEMPTS = 5


def _ok(result: Dict[str, Any]) -> Dict[str, Any]:
    assert result.get("failed") is None, result.get("msg")
    return result


def _drift(kubeconfig: str, ns: str) -> List[Dict[str, Any]]:
    status = _ok(run_module("update_status", {"details": "health"}, kubeconfig))["update_status"]
    return [i for i in status.get("insights") or []
            if (i.get("scope") or {}).get("namespace") == ns and i["uid"].startswith("drift-")]


def _kept(dyn: Any, kubeconfig: str, ns: str, first: Dict[str, Any]) -> bool:
    """Whether `first` stays as it is through a refresh of the module, the
    cheap one a record's change makes, and the module's again, in one try."""
    for attempt in range(ATTEMPTS):
        if attempt:
            first = _drift(kubeconfig, ns)[0]
        time.sleep(1.1)  # a new insight would start a second later
        again = _drift(kubeconfig, ns)
        other = f"glance{attempt}"  # a record's change: service_lifecycle refreshes, without drift
        _ok(run_module("service_lifecycle", {"service": other, "namespace": ns}, kubeconfig))
        singleton = dyn.resources.get(api_version=GROUP, kind="UpdateStatus").get(name="cluster").to_dict()
        cheap = [i for i in singleton["status"].get("insights") or [] if i["uid"] == first["uid"]]
        if again == [first] and cheap == [first] and _drift(kubeconfig, ns) == [first]:
            return True
    return False


def test_a_deployment_scaled_by_hand_is_drift_until_scaled_back(crds, dyn, kubeconfig, namespace) -> None:
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

    # Refreshed again, by the module and by the cheap refresh a record's change makes (no drift read):
    # first seen as it was. The bed's singleton is shared: a refresh by a runner of an other version
    # of the collection in between (no drift producer) drops the insight, so a few tries.
    assert _kept(dyn, kubeconfig, namespace, scaled), "the drift insight's startedAt was not kept"

    # Scaled back as the release sets it: the insight goes.
    deployments.patch(name="keystone-api", namespace=namespace, content_type="application/merge-patch+json",
                      body={"spec": {"replicas": replicas}})
    assert _drift(kubeconfig, namespace) == []
