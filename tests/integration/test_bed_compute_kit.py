"""Acceptance of the bed for openstack-helm's compute kit: deployed with
plain Helm as openstack-helm's scripts do (tests/support/compute_kit.py),
every release becomes Ready on the fake nodes, every Job completes, each
chart's Helm test passes, and the pods that wait across releases
(kubernetes-entrypoint) start only once what they wait for is Ready.

The order is read from the cluster: a watch on the namespace's pods and
EndpointSlices records every change with its resourceVersion, which the
bed's etcd numbers in one sequence for all objects, so "after" is exact
rather than to the second of a condition's lastTransitionTime.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import uuid
from typing import Any, Dict, Iterator, List, Optional

import pytest
from kubernetes import dynamic

from support import bed, compute_kit, kube, openstack_helm

pytestmark = pytest.mark.bed

DEPENDENCIES = "bed.lcm.openstack.org/dependencies"
WAITING_FOR = "bed.lcm.openstack.org/waiting-for"


class History:
    """Every change of one kind in the namespace, as (resourceVersion, object),
    from a ``kubectl get --watch`` started before anything was created."""

    def __init__(self, kubeconfig: str, namespace: str, kind: str) -> None:
        self.changes: List[tuple] = []
        self._proc = subprocess.Popen(
            [bed.kubectl_bin(), "get", kind, "-n", namespace, "--watch", "--output-watch-events", "-o", "json"],
            env=dict(os.environ, KUBECONFIG=kubeconfig), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        decoder, buffer = json.JSONDecoder(), ""
        for line in self._proc.stdout:
            buffer += line
            try:
                event, end = decoder.raw_decode(buffer.lstrip())
            except ValueError:
                continue
            buffer = buffer.lstrip()[end:]
            obj = event.get("object") or {}
            if event.get("type") in ("ADDED", "MODIFIED"):
                self.changes.append((int(obj["metadata"]["resourceVersion"]), obj))

    def stop(self) -> None:
        self._proc.terminate()
        self._proc.wait()
        self._reader.join()

    def of(self, prefix: str) -> Dict[str, List[tuple]]:
        """Each object whose name starts with ``prefix``: its changes in order."""
        found: Dict[str, List[tuple]] = {}
        for rv, obj in sorted(self.changes, key=lambda c: c[0]):
            if obj["metadata"]["name"].startswith(prefix):
                found.setdefault(obj["metadata"]["name"], []).append((rv, obj))
        return found


def first(changes: List[tuple], predicate) -> Optional[int]:
    """The resourceVersion at which ``predicate`` first held, or None."""
    return next((rv for rv, obj in changes if predicate(obj)), None)


def ready(pod: Dict[str, Any]) -> bool:
    return (kube.condition(pod, "Ready") or {}).get("status") == "True"


def satisfied(pod: Dict[str, Any]) -> bool:
    return (pod["metadata"].get("annotations") or {}).get(DEPENDENCIES) == "satisfied"


def waited_for(changes: List[tuple], text: str) -> bool:
    """bedlet said, at some point, that the pod was waiting for ``text``."""
    return any(text in (obj["metadata"].get("annotations") or {}).get(WAITING_FOR, "") for _rv, obj in changes)


def node(changes: List[tuple]) -> str:
    return changes[-1][1]["spec"]["nodeName"]


def ready_on(history: History, prefix: str, node_name: str) -> int:
    """When the pod of ``prefix`` on the node first became Ready."""
    (changes,) = [c for c in history.of(prefix).values() if node(c) == node_name]
    rv = first(changes, ready)
    assert rv is not None, (prefix, node_name)
    return rv


def items(dyn: dynamic.DynamicClient, api_version: str, kind: str, namespace: str) -> List[Dict[str, Any]]:
    return dyn.resources.get(api_version=api_version, kind=kind).get(namespace=namespace).to_dict()["items"]


@pytest.fixture(scope="module")
def kit(dyn: dynamic.DynamicClient, kubeconfig: str,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dict[str, Any]]:
    """The compute kit deployed once for the module's tests in a namespace of
    its own, with the history of its pods and EndpointSlices; removed, and
    the namespace deleted, after the last test."""
    namespace = f"kit-helm-{uuid.uuid4().hex[:5]}"
    namespaces = dyn.resources.get(api_version="v1", kind="Namespace")
    namespaces.create(body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    kube.wait_for(dyn, "v1", "ServiceAccount", "default", namespace, lambda _sa: True, timeout=30)
    pods = History(kubeconfig, namespace, "pods")
    slices = History(kubeconfig, namespace, "endpointslices")
    try:
        with compute_kit.deployed(kubeconfig, namespace, str(tmp_path_factory.mktemp("kit"))) as took:
            print(f"compute kit ready, seconds per release: {dict(took)}")
            yield {"namespace": namespace, "took": took, "pods": pods, "slices": slices}
    finally:
        pods.stop()
        slices.stop()
        namespaces.delete(name=namespace)


def kwok_nodes(dyn: dynamic.DynamicClient) -> Dict[str, str]:
    """Each fake node's name and InternalIP."""
    nodes = dyn.resources.get(api_version="v1", kind="Node").get(label_selector="type=kwok").to_dict()["items"]
    return {n["metadata"]["name"]: next(a["address"] for a in n["status"]["addresses"] if a["type"] == "InternalIP")
            for n in nodes}


def test_every_release_is_ready_on_every_labelled_node_and_every_job_completed(dyn, kit, record_property) -> None:
    record_property("seconds_to_ready", dict(kit["took"]))
    namespace, nodes = kit["namespace"], kwok_nodes(dyn)
    # Every DaemonSet has a pod on each labelled node (neutron's L3 agent on
    # the l3-agent label of the scripts), all updated and available.
    sets = {d["metadata"]["name"]: d["status"] for d in items(dyn, "apps/v1", "DaemonSet", namespace)}
    assert {"openvswitch", "libvirt-libvirt-default", "nova-compute-default", "neutron-ovs-agent-default",
            "neutron-dhcp-agent-default", "neutron-l3-agent-default", "neutron-metadata-agent-default"} <= set(sets)
    for name, status in sets.items():
        assert status["desiredNumberScheduled"] == len(nodes), name
        assert status["updatedNumberScheduled"] == status["numberAvailable"] == status["numberReady"] == len(nodes), name
    for dep in items(dyn, "apps/v1", "Deployment", namespace):
        assert dep["status"].get("availableReplicas") == dep["spec"]["replicas"], dep["metadata"]["name"]
    # The releases' own Jobs: not those nova's CronJobs start on their schedule (cell setup, hourly),
    # one of which may have just started when the test reads them.
    jobs = [j for j in items(dyn, "batch/v1", "Job", namespace)
            if not any(o.get("kind") == "CronJob" for o in j["metadata"].get("ownerReferences") or [])]
    assert {"nova-db-sync", "nova-cell-setup", "nova-bootstrap", "neutron-db-sync", "placement-db-sync"} <= {
        j["metadata"]["name"] for j in jobs}
    for job in jobs:
        assert (kube.condition(job, "Complete") or {}).get("status") == "True", job["metadata"]["name"]


def test_node_agents_on_the_host_network_have_their_node_address(dyn, kit) -> None:
    nodes = kwok_nodes(dyn)
    agents = [p for p in items(dyn, "v1", "Pod", kit["namespace"])
              if p["spec"].get("hostNetwork") and p["status"].get("phase") == "Running"]
    assert {p["metadata"]["labels"]["application"] for p in agents} >= {"openvswitch", "libvirt", "nova", "neutron"}
    for pod in agents:
        assert pod["status"]["podIP"] == pod["status"]["hostIP"] == nodes[pod["spec"]["nodeName"]]


def test_pods_waiting_across_releases_start_once_what_they_wait_for_is_ready(dyn, kit) -> None:
    pods, slices, nodes = kit["pods"], kit["slices"], kwok_nodes(dyn)
    # nova-compute (nova) waited for libvirt (libvirt) and neutron's
    # openvswitch agent (neutron) on its own node, libvirt for that agent,
    # the agent for an openvswitch pod (openvswitch) on its node. Where the
    # awaited pod cannot be Ready before the waiter is created (the agent
    # needs neutron-server, itself behind neutron's hooks), bedlet must have
    # said it held the waiter for it; openvswitch may well be Ready first.
    chains = [("nova-compute-default", "libvirt-libvirt-default", "application:libvirt"),
              ("nova-compute-default", "neutron-ovs-agent-default", "component:neutron-ovs-agent"),
              ("libvirt-libvirt-default", "neutron-ovs-agent-default", "component:neutron-ovs-agent"),
              ("neutron-ovs-agent-default", "openvswitch-", None)]
    for waiter, awaited, label in chains:
        assert len(pods.of(waiter)) == len(nodes), waiter
        for changes in pods.of(waiter).values():
            start = first(changes, satisfied)
            assert start is not None, waiter
            assert start > ready_on(pods, awaited, node(changes)), (waiter, awaited, node(changes))
            assert label is None or waited_for(changes, label), (waiter, label)

    # neutron's agents waited for nova's API Service (another release) to
    # have a ready endpoint; nova's cell setup for a Ready nova-compute.
    api = first(sum(slices.of("nova-api-").values(), []), lambda s: any(
        (e.get("conditions") or {}).get("ready") for e in s.get("endpoints") or []))
    assert api is not None
    for changes in pods.of("neutron-dhcp-agent-default").values():
        assert first(changes, ready) > first(changes, satisfied) > api
        assert waited_for(changes, "service nova-api has no ready endpoints")
    computes = min(first(c, ready) for c in pods.of("nova-compute-default").values())
    # The release's cell-setup Job's pod, not one of its hourly CronJob's (nova-cell-setup-<minute>-...).
    (cell_setup,) = [c for name, c in pods.of("nova-cell-setup-").items() if not re.match(r"nova-cell-setup-\d+-", name)]
    assert first(cell_setup, satisfied) > computes

    # bedlet's Events tell the same story, and no pod missed a volume.
    events = [e for e in items(dyn, "v1", "Event", kit["namespace"])
              if "bedlet" in ((e.get("source") or {}).get("component"), e.get("reportingComponent"))]
    met = {e["involvedObject"]["name"] for e in events if e["reason"] == "DependenciesMet"}
    assert set(pods.of("nova-compute-default")) <= met and set(pods.of("libvirt-libvirt-default")) <= met
    assert not [e for e in events if e["reason"] == "FailedMount"]


def test_each_charts_helm_test_passes(dyn, kubeconfig, kit) -> None:
    """keystone, nova and neutron ship a Helm test; the others none."""
    namespace = kit["namespace"]
    for release in compute_kit.KIT:
        out = subprocess.run([openstack_helm.helm_bin(), "test", release, "-n", namespace, "--timeout", "5m"],
                             env=dict(os.environ, KUBECONFIG=kubeconfig), capture_output=True, text=True,
                             check=False)
        assert out.returncode == 0, (release, out.stderr)
    tests = {p["metadata"]["name"]: p["status"]["phase"] for p in items(dyn, "v1", "Pod", namespace)
             if "test" in (p["metadata"].get("annotations") or {}).get("helm.sh/hook", "")}
    assert tests == {"keystone-test": "Succeeded", "nova-test": "Succeeded", "neutron-test": "Succeeded"}
