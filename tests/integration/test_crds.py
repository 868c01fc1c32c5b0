"""The lifecycle CRDs as the apiserver enforces them: readable refusals of bad
specs, the status subresource, and the printer columns operators read."""

from __future__ import annotations

from typing import Any, Dict

import pytest
from kubernetes import dynamic
from kubernetes.client.rest import ApiException


GROUP = "lifecycle.openstack.org/v1alpha1"


def phase(name: str, **spec: Any) -> Dict[str, Any]:
    base = {"type": "install", "service": "keystone", "release": "keystone"}
    base.update(spec)
    return {"apiVersion": GROUP, "kind": "Phase", "metadata": {"name": name}, "spec": base}


def refusal(dyn: dynamic.DynamicClient, namespace: str, body: Dict[str, Any]) -> str:
    res = dyn.resources.get(api_version=GROUP, kind="Phase")
    with pytest.raises(ApiException) as exc:
        res.create(body=body, namespace=namespace)
    assert exc.value.status == 422
    return exc.value.body


def test_a_typo_in_the_phase_type_is_refused_readably(crds, dyn, namespace) -> None:
    body = refusal(dyn, namespace, phase("p", type="instal"))
    assert 'spec.type: Unsupported value: \\"instal\\"' in body
    assert '\\"install\\"' in body  # the refusal lists the supported values


def test_a_block_for_another_phase_type_is_refused(crds, dyn, namespace) -> None:
    body = refusal(dyn, namespace, phase("p", upgrade={"backupDatabase": True}))
    assert "spec.upgrade is only allowed when spec.type is upgrade" in body


def test_the_phase_type_cannot_change(crds, dyn, namespace) -> None:
    res = dyn.resources.get(api_version=GROUP, kind="Phase")
    res.create(body=phase("p"), namespace=namespace)
    with pytest.raises(ApiException) as exc:
        res.patch(name="p", namespace=namespace, body={"spec": {"type": "test"}},
                  content_type="application/merge-patch+json")
    assert "spec.type is immutable" in exc.value.body


def test_status_is_a_subresource(crds, dyn, namespace) -> None:
    res = dyn.resources.get(api_version=GROUP, kind="Phase")
    res.create(body=phase("p"), namespace=namespace)
    # Through the main resource, status is ignored...
    res.patch(name="p", namespace=namespace, body={"status": {"state": "Running"}},
              content_type="application/merge-patch+json")
    assert "status" not in res.get(name="p", namespace=namespace).to_dict()
    # ...and written only through /status, where it is validated too.
    res.status.patch(name="p", namespace=namespace, body={"status": {"state": "Running"}},
                     content_type="application/merge-patch+json")
    assert res.get(name="p", namespace=namespace).to_dict()["status"]["state"] == "Running"
    with pytest.raises(ApiException) as exc:
        res.status.patch(name="p", namespace=namespace, body={"status": {"state": "Done"}},
                         content_type="application/merge-patch+json")
    assert "Unsupported value" in exc.value.body


def test_kubectl_get_phases_shows_the_operator_columns(crds, dyn, namespace, kubectl) -> None:
    res = dyn.resources.get(api_version=GROUP, kind="Phase")
    res.create(body=phase("keystone-install", targetVersion="2025.1"), namespace=namespace)
    res.status.patch(name="keystone-install", namespace=namespace,
                     content_type="application/merge-patch+json",
                     body={"status": {"state": "Failed",
                                      "message": "Job keystone-db-sync failed: BackoffLimitExceeded"}})
    out = kubectl("get", "ph", "-n", namespace).stdout.splitlines()
    assert out[0].split() == ["NAME", "TYPE", "SERVICE", "STATE", "AGE", "MESSAGE"]
    row = out[1].split()
    assert row[:4] == ["keystone-install", "install", "keystone", "Failed"]
    assert " ".join(row[5:]) == "Job keystone-db-sync failed: BackoffLimitExceeded"


def test_servicelifecycle_refuses_an_unknown_state(crds, dyn, namespace) -> None:
    res = dyn.resources.get(api_version=GROUP, kind="ServiceLifecycle")
    res.create(namespace=namespace, body={
        "apiVersion": GROUP, "kind": "ServiceLifecycle", "metadata": {"name": "keystone"},
        "spec": {"service": "keystone", "release": "keystone"}})
    res.status.patch(name="keystone", namespace=namespace,
                     content_type="application/merge-patch+json",
                     body={"status": {"state": "Operational", "currentVersion": "2025.1"}})
    with pytest.raises(ApiException) as exc:
        res.status.patch(name="keystone", namespace=namespace,
                         content_type="application/merge-patch+json",
                         body={"status": {"state": "Broken"}})
    assert exc.value.status == 422 and "status.state" in exc.value.body
