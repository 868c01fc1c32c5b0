"""The engine's dry run and refusals against the bed's real apiserver: a Pod
whose ServiceAccount the same phase creates passes the dry run; admission
refusals keep the apiserver's message instead of blaming the credentials."""

from __future__ import annotations

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.phase.apply import Applier
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError

OWNER = {"apiVersion": "lifecycle.openstack.org/v1alpha1", "kind": "Phase", "name": "dry-run",
         "uid": "00000000-0000-0000-0000-000000000000", "controller": True, "blockOwnerDeletion": True}
ACCOUNT = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "keystone-test"}}


def _pod(account: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "keystone-test"},
            "spec": {"serviceAccountName": account, "restartPolicy": "Never",
                     "containers": [{"name": "test", "image": "registry.invalid/keystone:2025.1"}]}}


def test_dry_run_of_a_pod_and_the_account_the_phase_creates(dyn, namespace) -> None:
    dry = Applier(dyn, namespace, dry_run=True)
    assert dry.apply(ACCOUNT, OWNER, {}).action == "created"
    pod = dry.apply(_pod("keystone-test"), OWNER, {})
    assert pod.action == "created"
    assert "in place of keystone-test, which this phase creates in an earlier wave" in pod.note
    # nothing was written
    for kind in ("ServiceAccount", "Pod"):
        names = [i["metadata"]["name"] for i in
                 dyn.resources.get(api_version="v1", kind=kind).get(namespace=namespace).to_dict()["items"]]
        assert "keystone-test" not in names


def test_an_admission_refusal_keeps_the_apiservers_message(dyn, namespace) -> None:
    dry = Applier(dyn, namespace, dry_run=True)
    with pytest.raises(PhaseError) as err:
        dry.apply(_pod("nobody-creates-it"), OWNER, {})
    msg = str(err.value)
    assert msg.startswith('the apiserver refused Pod keystone-test: pods "keystone-test" is forbidden: '
                          f"error looking up service account {namespace}/nobody-creates-it")
    assert "credentials" not in msg and "Grant" not in msg
