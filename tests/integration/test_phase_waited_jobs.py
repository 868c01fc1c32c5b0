"""Every Phase of a running service deleted, on the real keystone chart: nothing
the service uses is gone, and a new keystone-api pod starts again.

keystone-api's init container (kubernetes-entrypoint) waits for
keystone-db-sync, keystone-credential-setup and keystone-fernet-setup to
exist and be complete, each time a pod of it starts; the bed's bedlet gates
its pods exactly so. Those Jobs must outlive the install Phase, as must the
Jobs they wait for in turn (db-sync waits for db-init, and a later upgrade's
db-sync will again) and the Secrets and ConfigMaps the Deployment mounts.

The install role switches the release's jobs off, and helm-toolkit then
drops them from the release's own keystone-api too (its
dependency_jobs_filter). The test puts back the DEPENDENCY_JOBS the chart
renders with its jobs on, before the install phase runs, so that every
keystone-api pod here is gated on those Jobs and the gate is real.
"""

from __future__ import annotations

from typing import Any, Dict, List, Set, Tuple

import pytest
from kubernetes import dynamic

from ansible_collections.lcm.openstack.plugins.module_utils.phase.waves import declared
from ansible_collections.lcm.openstack.plugins.module_utils.phase.selection import pod_references
from support import kube, openstack_helm
from support.ansible import run_module

pytestmark = pytest.mark.bed

GROUP = "lifecycle.openstack.org/v1alpha1"
API_WAITS_FOR = {"keystone-db-sync", "keystone-credential-setup", "keystone-fernet-setup"}
API_SELECTOR = "application=keystone,component=api"


def items(dyn: dynamic.DynamicClient, api_version: str, kind: str, namespace: str,
          selector: str = "") -> List[Dict[str, Any]]:
    res = dyn.resources.get(api_version=api_version, kind=kind)
    return res.get(namespace=namespace, label_selector=selector or None).to_dict()["items"]


def get(dyn: dynamic.DynamicClient, api_version: str, kind: str, namespace: str, name: str) -> Dict[str, Any]:
    return dyn.resources.get(api_version=api_version, kind=kind).get(name=name, namespace=namespace).to_dict()


def ready(pod: Dict[str, Any]) -> bool:
    return kube.has_condition("Ready")(pod)


@pytest.fixture
def keystone(dyn, kubeconfig, crds, namespace) -> Tuple[str, Dict[str, Any]]:
    """keystone installed as the install role does: the release with its jobs
    switched off, then the install phase; returns the namespace and the
    phase module's result. The namespace is the test's own, with its own
    mariadb, memcached and rabbitmq (keystone finds them in its namespace)."""
    openstack_helm.install_infrastructure(kubeconfig, namespace)
    env = {"HELM_BIN": openstack_helm.helm_bin()}
    chart = str(openstack_helm.chart("keystone"))
    release = run_module("helm_release", {"name": "keystone", "namespace": namespace, "chart": chart,
                                          "disable_jobs": True, "wait": False}, kubeconfig, env=env)
    assert release.get("failed") is None, release.get("msg")
    gate = {"spec": {"template": {"spec": {"initContainers": [{"name": "init", "env": [
        {"name": "DEPENDENCY_JOBS", "value": ",".join(sorted(API_WAITS_FOR))}]}]}}}}
    dyn.resources.get(api_version="apps/v1", kind="Deployment").patch(
        body=gate, name="keystone-api", namespace=namespace,
        content_type="application/strategic-merge-patch+json")
    phase = run_module("phase", {"type": "install", "service": "keystone", "namespace": namespace,
                                 "target_version": "2025.1", "source": {"chart": chart}, "timeout": 300},
                       kubeconfig, env=env)
    assert phase.get("failed") is None, phase.get("msg")
    assert phase["phase"]["state"] == "Succeeded"
    return namespace, phase


def test_deleting_every_phase_leaves_what_keystone_uses(dyn, kubeconfig, keystone) -> None:
    ns, result = keystone
    name = result["phase"]["name"]

    # The Jobs keystone-api waits for were applied without an owner, each saying why.
    applied = {(o["kind"], o["name"]): o for o in result["objects_applied"]}
    for job in API_WAITS_FOR:
        entry = applied[("Job", job)]
        assert entry["owned"] is False and "Deployment/keystone-api (DEPENDENCY_JOBS)" in entry["reason"]
    # So was db-init, which db-sync waits for; bootstrap, which nothing waits for, is the Phase's.
    assert applied[("Job", "keystone-db-init")]["owned"] is False
    assert "Job/keystone-db-sync (DEPENDENCY_JOBS)" in applied[("Job", "keystone-db-init")]["reason"]
    assert applied[("Job", "keystone-bootstrap")]["owned"] is True
    # and the Phase status records the same decisions
    recorded = {(o["kind"], o["name"]): o for o in get(dyn, GROUP, "Phase", ns, name)["status"]["objects"]}
    assert recorded[("Job", "keystone-db-sync")]["owned"] is False
    assert recorded[("Job", "keystone-db-sync")]["reason"] == applied[("Job", "keystone-db-sync")]["reason"]
    assert recorded[("Job", "keystone-bootstrap")]["owned"] is True

    deployment = get(dyn, "apps/v1", "Deployment", ns, "keystone-api")
    uses: Set[Tuple[str, str]] = {r for r in pod_references(deployment) if r[0] in ("Secret", "ConfigMap")}
    waits = {d.name for d in declared(deployment) if d.kind == "Job"}
    assert waits == API_WAITS_FOR and {("Secret", "keystone-fernet-keys"), ("Secret", "keystone-etc")} <= uses
    (before,) = [p for p in items(dyn, "v1", "Pod", ns, API_SELECTOR) if ready(p)]

    # Delete every Phase of the service, as a user would.
    listed = run_module("phase_info", {"namespace": ns, "service": "keystone"}, kubeconfig)
    phases = [p["name"] for p in listed["phases"]]
    assert name in phases
    for phase in phases:
        gone = run_module("phase", {"type": "install", "service": "keystone", "namespace": ns, "name": phase,
                                    "state": "absent"}, kubeconfig)
        assert gone.get("failed") is None and gone["deleted"] == [phase], gone.get("msg")
    assert items(dyn, GROUP, "Phase", ns, "lifecycle.openstack.org/service=keystone") == []
    # What the Phase owned went with it ...
    jobs = {j["metadata"]["name"]: j for j in items(dyn, "batch/v1", "Job", ns)}
    assert "keystone-bootstrap" not in jobs
    # ... and nothing the service uses did.
    for job in API_WAITS_FOR | {"keystone-db-init"}:
        assert kube.condition(jobs[job], "Complete")["status"] == "True", job
        assert not jobs[job]["metadata"].get("ownerReferences"), job
    for kind, obj_name in sorted(uses):
        assert get(dyn, "v1", kind, ns, obj_name)["metadata"]["name"] == obj_name

    # A new keystone-api pod passes its init container again and becomes Ready.
    dyn.resources.get(api_version="v1", kind="Pod").delete(name=before["metadata"]["name"], namespace=ns)
    after = _new_ready_pod(dyn, ns, before["metadata"]["uid"])
    assert after["metadata"]["annotations"]["bed.lcm.openstack.org/dependencies"] == "satisfied"


def _new_ready_pod(dyn: dynamic.DynamicClient, ns: str, old_uid: str, timeout: int = 120) -> Dict[str, Any]:
    """Watch keystone-api's pods until one other than the deleted one is Ready."""
    pods = dyn.resources.get(api_version="v1", kind="Pod")
    listed = pods.get(namespace=ns, label_selector=API_SELECTOR).to_dict()
    for pod in listed["items"]:
        if pod["metadata"]["uid"] != old_uid and ready(pod):
            return pod
    last: Dict[str, Any] = {}
    for event in pods.watch(namespace=ns, label_selector=API_SELECTOR,
                            resource_version=listed["metadata"]["resourceVersion"], timeout=timeout):
        pod = event["raw_object"]
        if event["type"] != "DELETED" and pod["metadata"]["uid"] != old_uid:
            last = pod
            if ready(pod):
                return pod
    raise AssertionError(f"no new keystone-api pod became Ready in {timeout}s; last: {last.get('status')}"
                         f" {(last.get('metadata') or {}).get('annotations')}")


def test_check_mode_of_a_first_install_counts_the_releases_own_services(
        kubeconfig, crds, openstack_infrastructure) -> None:
    """Before keystone's release exists, its install phase in check mode waits
    for keystone-api (domain-manage and bootstrap do): the release creates it,
    so the check passes. A dry run writes nothing, so the shared namespace serves."""
    args = {"type": "install", "service": "keystone", "namespace": openstack_infrastructure,
            "source": {"chart": str(openstack_helm.chart("keystone"))}}
    result = run_module("phase", args, kubeconfig, check=True, env={"HELM_BIN": openstack_helm.helm_bin()})
    assert result.get("failed") is None, result.get("msg")
    assert result["changed"] is True and result["phase"]["state"] == "Pending"
    applied = {(o["kind"], o["name"]) for o in result["objects_applied"]}
    assert {("Job", "keystone-domain-manage"), ("Job", "keystone-bootstrap")} <= applied
