"""The bed's fake kubelet as openstack-helm's node agents need it: a pod
whose volumes mount a Secret or ConfigMap that does not exist starts nothing
until the object exists (nova and libvirt with Ceph on, the chart default,
on a site without Ceph), and a hostNetwork pod has its node's address."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest
from kubernetes import dynamic

from support import kube

pytestmark = pytest.mark.bed

MISSING = "bed.lcm.openstack.org/missing-volumes"
ADMITTED = "bed.lcm.openstack.org/admitted"
DEPENDENCIES = "bed.lcm.openstack.org/dependencies"


def create(dyn: dynamic.DynamicClient, namespace: str, body: Dict[str, Any]) -> Dict[str, Any]:
    res = dyn.resources.get(api_version=body["apiVersion"], kind=body["kind"])
    return res.create(body=body, namespace=namespace).to_dict()


def ceph_pod(name: str, gated: bool = False) -> Dict[str, Any]:
    """A pod mounting what a Ceph deployment provides (as nova-compute and
    libvirt do with conf.ceph.enabled), one optional Secret nobody makes, and,
    when ``gated``, a kubernetes-entrypoint init container with nothing to
    wait for."""
    spec: Dict[str, Any] = {
        "containers": [{"name": "main", "image": "registry.invalid/nova:1"}],
        "volumes": [
            {"name": "ceph-keyring", "secret": {"secretName": "pvc-ceph-client-key"}},
            {"name": "etcceph", "configMap": {"name": "ceph-etc"}},
            {"name": "maybe", "secret": {"secretName": "nobody-makes-it", "optional": True}},
        ],
    }
    if gated:
        spec["initContainers"] = [{"name": "init", "image": "registry.invalid/kubernetes-entrypoint:1",
                                   "env": [{"name": "DEPENDENCY_SERVICE", "value": ""}]}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def failed_mounts(dyn: dynamic.DynamicClient, namespace: str, pod: str, count: int,
                  timeout: int = 30) -> List[str]:
    """The messages of the pod's FailedMount Events, once there are ``count``
    (they are recorded just after the annotation that a test waits for)."""
    res = dyn.resources.get(api_version="v1", kind="Event")
    selector = f"involvedObject.name={pod},reason=FailedMount"
    listed = res.get(namespace=namespace, field_selector=selector).to_dict()
    seen = {e["metadata"]["name"]: e["message"] for e in listed["items"]}
    if len(seen) < count:
        for event in res.watch(namespace=namespace, field_selector=selector, timeout=timeout,
                               resource_version=listed["metadata"]["resourceVersion"]):
            seen[event["raw_object"]["metadata"]["name"]] = event["raw_object"]["message"]
            if len(seen) >= count:
                break
    return sorted(seen.values())


def running(obj: Dict[str, Any]) -> bool:
    return (obj.get("status") or {}).get("phase") == "Running"


def test_a_pod_starts_nothing_until_the_objects_its_volumes_mount_exist(dyn, namespace) -> None:
    create(dyn, namespace, ceph_pod("compute", gated=True))
    create(dyn, namespace, ceph_pod("plain"))
    # A pod without such volumes: once it runs, the bed has had every chance
    # to start the others too.
    create(dyn, namespace, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "control"},
                            "spec": {"containers": [{"name": "main", "image": "registry.invalid/app:1"}]}})
    kube.wait_for(dyn, "v1", "Pod", "control", namespace, running)
    for name in ("compute", "plain"):
        held = kube.wait_for(dyn, "v1", "Pod", name, namespace,
                             lambda p: MISSING in (p["metadata"].get("annotations") or {}))
        annotations = held["metadata"]["annotations"]
        assert annotations[MISSING] == ("configmap ceph-etc (volume etcceph); "
                                        "secret pvc-ceph-client-key (volume ceph-keyring)")
        assert ADMITTED not in annotations and DEPENDENCIES not in annotations
        assert held["spec"]["nodeName"] and held["status"]["phase"] == "Pending"
        assert not held["status"].get("podIP") and not held["status"].get("initContainerStatuses")
        assert failed_mounts(dyn, namespace, name, 2) == [
            'MountVolume.SetUp failed for volume "ceph-keyring" : secret "pvc-ceph-client-key" not found',
            'MountVolume.SetUp failed for volume "etcceph" : configmap "ceph-etc" not found']

    create(dyn, namespace, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "pvc-ceph-client-key"},
                            "stringData": {"key": "not-a-real-key"}})
    held = kube.wait_for(dyn, "v1", "Pod", "plain", namespace,
                         lambda p: p["metadata"]["annotations"].get(MISSING) == "configmap ceph-etc (volume etcceph)")
    assert not held["status"].get("podIP")

    create(dyn, namespace, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ceph-etc"}})
    for name in ("compute", "plain"):
        started = kube.wait_for(dyn, "v1", "Pod", name, namespace, running)
        assert started["metadata"]["annotations"][ADMITTED] == "true"
        assert MISSING not in started["metadata"]["annotations"]
    assert kube.condition(started, "Ready")["status"] == "True"


def test_a_host_network_pod_has_its_node_address_and_others_a_pod_address(dyn, namespace) -> None:
    for name, host in (("agent", True), ("api", False)):
        create(dyn, namespace, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                                "spec": {"hostNetwork": host,
                                         "containers": [{"name": "main", "image": "registry.invalid/app:1"}]}})
    agent = kube.wait_for(dyn, "v1", "Pod", "agent", namespace, running)
    api = kube.wait_for(dyn, "v1", "Pod", "api", namespace, running)
    node = dyn.resources.get(api_version="v1", kind="Node").get(name=agent["spec"]["nodeName"]).to_dict()
    internal = [a["address"] for a in node["status"]["addresses"] if a["type"] == "InternalIP"]
    assert agent["status"]["podIP"] == agent["status"]["hostIP"] == internal[0]
    assert api["status"]["podIP"] != api["status"]["hostIP"]
