"""kube/old_pods.py on a real control plane: a Deployment rolled by its
controller, and the wait for its old pod to be gone, which a terminating pod
holds (the Deployment's status no longer counts it)."""

from __future__ import annotations

import queue
import threading
from typing import Any, Dict, List, Tuple

import pytest
from kubernetes import dynamic
from kubernetes.client.rest import ApiException

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.old_pods import wait_gone
from support import kube

pytestmark = pytest.mark.bed

HOLD = "test.lcm.openstack.org/hold"


def deployment(name: str) -> Dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}},
                     "template": {"metadata": {"labels": labels, "annotations": {"config-hash": "1"}},
                                  "spec": {"containers": [{"name": "api", "image": "registry.invalid/api:1"}]}}}}


def rolled_out(d: Dict[str, Any]) -> bool:
    """The controller's verdict: every replica updated and available, none of the old template counted."""
    status = d.get("status") or {}
    return (status.get("observedGeneration") == d["metadata"]["generation"] and status.get("replicas") == 1
            and status.get("updatedReplicas") == 1 and status.get("availableReplicas") == 1)


class PodEvents(threading.Thread):
    """A watch of the namespace's pods of its own, from a list: every event, in order, as (type, pod, terminating)."""

    def __init__(self, dyn: dynamic.DynamicClient, namespace: str, name: str) -> None:
        super().__init__(daemon=True)
        self.res = dyn.resources.get(api_version="v1", kind="Pod")
        self.namespace, self.name = namespace, name
        self.rv = self.res.get(namespace=namespace).to_dict()["metadata"]["resourceVersion"]
        self.events: "queue.Queue[Tuple[str, str, bool]]" = queue.Queue()
        self.seen: List[Tuple[str, str, bool]] = []

    def run(self) -> None:
        for event in self.res.watch(namespace=self.namespace, resource_version=self.rv, timeout=120):
            meta = event["raw_object"]["metadata"]
            self.events.put((event["type"], meta["name"], "deletionTimestamp" in meta))
            if event["type"] == "DELETED" and meta["name"] == self.name:
                return

    def until(self, wanted: Tuple[str, str, bool], timeout: float = 60) -> None:
        """Block until the watch delivered `wanted` (event-driven: the queue wakes on each event)."""
        while wanted not in self.seen:
            self.seen.append(self.events.get(timeout=timeout))


def test_the_wait_returns_only_once_the_old_pod_is_deleted(dyn, namespace) -> None:
    deployments = dyn.resources.get(api_version="apps/v1", kind="Deployment")
    pods = dyn.resources.get(api_version="v1", kind="Pod")
    deployments.create(body=deployment("api"), namespace=namespace)
    kube.wait_for(dyn, "apps/v1", "Deployment", "api", namespace,
                  lambda d: kube.has_condition("Available")(d) and rolled_out(d), timeout=60)
    (old,) = [p["metadata"]["name"] for p in pods.get(namespace=namespace, label_selector="app=api").to_dict()["items"]]
    # A finalizer keeps the old pod terminating once the rollout deletes it, for as long as the test wants.
    pods.patch(name=old, namespace=namespace, content_type="application/merge-patch+json",
               body={"metadata": {"finalizers": [HOLD]}})
    events = PodEvents(dyn, namespace, old)
    events.start()

    lines: List[str] = []
    terminating = threading.Event()
    outcome: Dict[str, Any] = {}

    def progress(line: str) -> None:
        lines.append(line)
        if f"{old} (Deployment api, " in line and "terminating since" in line:
            terminating.set()

    def wait() -> None:
        try:
            outcome["waited"] = wait_gone(dyn, namespace, [("Deployment", "api")], timeout=120, progress=progress)
            outcome["old pod at return"] = kube.get_or_none(dyn, "v1", "Pod", old, namespace)
        except Exception as exc:  # noqa: BLE001 - failed in the thread, asserted below
            outcome["error"] = exc

    try:
        deployments.patch(name="api", namespace=namespace, content_type="application/merge-patch+json",
                          body={"spec": {"template": {"metadata": {"annotations": {"config-hash": "2"}}}}})
        waiter = threading.Thread(target=wait, daemon=True)
        waiter.start()
        events.until(("MODIFIED", old, True))  # the rollout deleted it: terminating, held by the finalizer
        kube.wait_for(dyn, "apps/v1", "Deployment", "api", namespace, rolled_out, timeout=60)
        assert terminating.wait(60), lines
        # The Deployment says rolled out, the old pod still exists: the wait goes on.
        assert waiter.is_alive() and outcome == {}, outcome
    finally:
        pods.patch(name=old, namespace=namespace, content_type="application/merge-patch+json",
                   body={"metadata": {"finalizers": None}})
    events.until(("DELETED", old, True))
    waiter.join(60)
    assert not waiter.is_alive() and "error" not in outcome, outcome
    assert outcome["old pod at return"] is None  # gone before the wait returned
    assert outcome["waited"] and outcome["waited"][0].startswith(f"{old} (Deployment api, ")
    assert any(line.startswith("waiting for 1 old pod to go: ") for line in lines)
    new = [p["metadata"]["name"] for p in pods.get(namespace=namespace, label_selector="app=api").to_dict()["items"]]
    assert len(new) == 1 and new[0] != old


def test_the_wait_of_an_unhindered_rollout_returns_with_the_old_pod_gone(dyn, namespace) -> None:
    """No finalizer: the rollout deletes the old pod and the bed confirms it at
    once. The return is after the deletion by cause, not by a clock: the old
    pod is read at once after the return, and is not found."""
    deployments = dyn.resources.get(api_version="apps/v1", kind="Deployment")
    pods = dyn.resources.get(api_version="v1", kind="Pod")
    deployments.create(body=deployment("api"), namespace=namespace)
    kube.wait_for(dyn, "apps/v1", "Deployment", "api", namespace,
                  lambda d: kube.has_condition("Available")(d) and rolled_out(d), timeout=60)
    (old,) = [p["metadata"]["name"] for p in pods.get(namespace=namespace, label_selector="app=api").to_dict()["items"]]
    events = PodEvents(dyn, namespace, old)
    events.start()
    deployments.patch(name="api", namespace=namespace, content_type="application/merge-patch+json",
                      body={"spec": {"template": {"metadata": {"annotations": {"config-hash": "2"}}}}})
    waited = wait_gone(dyn, namespace, [("Deployment", "api")], timeout=120)
    assert kube.get_or_none(dyn, "v1", "Pod", old, namespace) is None
    assert waited and waited[0].startswith(f"{old} (Deployment api, ")
    events.until(("DELETED", old, True))
    assert wait_gone(dyn, namespace, [("Deployment", "api")], timeout=120) == []  # nothing old left: at once


def test_the_wait_times_out_naming_the_old_pod_a_finalizer_holds(dyn, namespace) -> None:
    deployments = dyn.resources.get(api_version="apps/v1", kind="Deployment")
    pods = dyn.resources.get(api_version="v1", kind="Pod")
    deployments.create(body=deployment("api"), namespace=namespace)
    kube.wait_for(dyn, "apps/v1", "Deployment", "api", namespace, rolled_out, timeout=60)
    (old,) = [p["metadata"]["name"] for p in pods.get(namespace=namespace, label_selector="app=api").to_dict()["items"]]
    pods.patch(name=old, namespace=namespace, content_type="application/merge-patch+json",
               body={"metadata": {"finalizers": [HOLD]}})
    try:
        deployments.patch(name="api", namespace=namespace, content_type="application/merge-patch+json",
                          body={"spec": {"template": {"metadata": {"annotations": {"config-hash": "2"}}}}})
        kube.wait_for(dyn, "apps/v1", "Deployment", "api", namespace, rolled_out, timeout=60)
        kube.wait_for(dyn, "v1", "Pod", old, namespace, lambda p: "deletionTimestamp" in p["metadata"], timeout=60)
        with pytest.raises(KubeError) as raised:
            wait_gone(dyn, namespace, [("Deployment", "api")], timeout=3)
        (left,) = raised.value.details["old_pods"]
        assert left.startswith(f"{old} (Deployment api, revision 1, current 2, terminating since ")
        assert left in str(raised.value)
    finally:
        try:
            pods.patch(name=old, namespace=namespace, content_type="application/merge-patch+json",
                       body={"metadata": {"finalizers": None}})
        except ApiException as exc:
            if exc.status != 404:
                raise


def statefulset(name: str) -> Dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name},
            "spec": {"replicas": 2, "serviceName": name, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels, "annotations": {"config-hash": "1"}},
                                  "spec": {"containers": [{"name": "db", "image": "registry.invalid/db:1"}]}}}}


def daemonset(name: str) -> Dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels, "annotations": {"config-hash": "1"}},
                                  "spec": {"containers": [{"name": "agent", "image": "registry.invalid/agent:1"}]}}}}


def settled(d: Dict[str, Any]) -> bool:
    """A StatefulSet's or DaemonSet's controller done with its current generation, every pod ready."""
    status = d.get("status") or {}
    if status.get("observedGeneration") != d["metadata"]["generation"]:
        return False
    if d["kind"] == "StatefulSet":
        return status.get("readyReplicas") == 2 and status.get("currentRevision") == status.get("updateRevision")
    desired = status.get("desiredNumberScheduled")
    return bool(desired) and status.get("numberReady") == desired == status.get("updatedNumberScheduled")


@pytest.mark.parametrize("body", [statefulset("db"), daemonset("agent")], ids=["StatefulSet", "DaemonSet"])
def test_the_pods_a_controller_rolls_are_judged_by_its_revisions(dyn, namespace, body) -> None:
    """The revisions as the real controllers write them: a StatefulSet's
    updateRevision, a DaemonSet's newest ControllerRevision, and the label
    each puts on its pods. The wait returns once no pod carries an older one
    and none is terminating."""
    kind, name = body["kind"], body["metadata"]["name"]
    res = dyn.resources.get(api_version="apps/v1", kind=kind)
    pods = dyn.resources.get(api_version="v1", kind="Pod")
    res.create(body=body, namespace=namespace)
    kube.wait_for(dyn, "apps/v1", kind, name, namespace, settled, timeout=60)
    before = {p["metadata"]["name"]: p["metadata"]["labels"]["controller-revision-hash"]
              for p in pods.get(namespace=namespace, label_selector=f"app={name}").to_dict()["items"]}
    res.patch(name=name, namespace=namespace, content_type="application/merge-patch+json",
              body={"spec": {"template": {"metadata": {"annotations": {"config-hash": "2"}}}}})
    waited = wait_gone(dyn, namespace, [(kind, name)], timeout=120)
    after = pods.get(namespace=namespace, label_selector=f"app={name}").to_dict()["items"]
    live = res.get(name=name, namespace=namespace).to_dict()
    if kind == "StatefulSet":
        current = live["status"]["updateRevision"]
    else:
        owned = [r for r in dyn.resources.get(api_version="apps/v1", kind="ControllerRevision").get(
            namespace=namespace).to_dict()["items"] if r["metadata"]["ownerReferences"][0]["uid"] == live["metadata"]["uid"]]
        current = max(owned, key=lambda r: r["revision"])["metadata"]["labels"]["controller-revision-hash"]
    assert current not in before.values()  # the patch made a new revision
    assert after and all(p["metadata"]["labels"]["controller-revision-hash"] == current for p in after)
    assert all("deletionTimestamp" not in p["metadata"] for p in after)  # (a replacement may not be created yet)
    assert waited and {w.split(" ", 1)[0] for w in waited} <= set(before)
