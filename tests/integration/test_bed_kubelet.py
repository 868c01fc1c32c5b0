"""The bed behaves like a kubelet under openstack-helm: kubernetes-entrypoint
init containers hold a pod until its dependencies hold, OnFailure Job pods
restart in place, a namespace's bed-faults ConfigMap makes a stock Job fail,
claims of the bed's storage classes bind, and the nodes
carry the labels the charts schedule on."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

import pytest
import yaml
from kubernetes import dynamic

from support import bed_faults, compute_kit, kube, openstack_helm

FAIL = "bed.lcm.openstack.org/fail"
DURATION = "bed.lcm.openstack.org/duration"
DEPENDENCIES = "bed.lcm.openstack.org/dependencies"
WAITING_FOR = "bed.lcm.openstack.org/waiting-for"

pytestmark = pytest.mark.bed


def create(dyn: dynamic.DynamicClient, namespace: str, body: Dict[str, Any]) -> Dict[str, Any]:
    res = dyn.resources.get(api_version=body["apiVersion"], kind=body["kind"])
    return res.create(body=body, namespace=namespace).to_dict()


def pod(name: str, env: Optional[List[Dict[str, Any]]] = None,
        labels: Optional[Dict[str, str]] = None,
        annotations: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """A pod with one init container, shaped as helm-toolkit renders the
    kubernetes-entrypoint one when ``env`` carries DEPENDENCY_* variables."""
    base = [{"name": "NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {}, "annotations": annotations or {}},
        "spec": {
            "initContainers": [{"name": "init", "image": "registry.invalid/kubernetes-entrypoint:1",
                                "command": ["kubernetes-entrypoint"], "env": base + (env or [])}],
            "containers": [{"name": "main", "image": "registry.invalid/app:1"}],
        },
    }


def job(name: str, annotations: Dict[str, str], backoff: int, restart: str = "OnFailure",
        suspend: bool = False) -> Dict[str, Any]:
    return {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
        "spec": {
            "backoffLimit": backoff, "suspend": suspend,
            "template": {
                "metadata": {"annotations": annotations},
                "spec": {"restartPolicy": restart,
                         "containers": [{"name": "main", "image": "registry.invalid/job:1"}]},
            },
        },
    }


def job_pod(dyn: dynamic.DynamicClient, namespace: str, job_name: str,
            predicate: Callable[[Dict[str, Any]], bool], timeout: int = 60) -> Dict[str, Any]:
    """The Job's pod once ``predicate`` holds for it (list, then watch)."""
    pods = dyn.resources.get(api_version="v1", kind="Pod")
    selector = f"job-name={job_name}"
    listed = pods.get(namespace=namespace, label_selector=selector).to_dict()
    for item in listed["items"]:
        if predicate(item):
            return item
    for event in pods.watch(namespace=namespace, label_selector=selector, timeout=timeout,
                            resource_version=listed["metadata"]["resourceVersion"]):
        if event["type"] != "DELETED" and predicate(event["raw_object"]):
            return event["raw_object"]
    raise TimeoutError(f"no pod of Job {job_name} reached {predicate.__name__} in {timeout}s")


def running(obj: Dict[str, Any]) -> bool:
    return (obj.get("status") or {}).get("phase") == "Running"


def annotated_waiting(obj: Dict[str, Any]) -> bool:
    """Bound, its entrypoint container running, and bedlet has said why."""
    status = obj.get("status") or {}
    inits = status.get("initContainerStatuses") or []
    return bool(status.get("podIP") and inits and "running" in (inits[0].get("state") or {})
                and WAITING_FOR in (obj["metadata"].get("annotations") or {}))


def assert_held(held: Dict[str, Any], waiting_for: str) -> None:
    """The pod is as a node shows a pod whose entrypoint init container runs."""
    assert held["status"]["phase"] == "Pending"
    assert kube.condition(held, "Initialized")["status"] == "False"
    assert "running" in held["status"]["initContainerStatuses"][0]["state"]
    assert held["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "PodInitializing"
    assert waiting_for in held["metadata"]["annotations"][WAITING_FOR]
    assert DEPENDENCIES not in held["metadata"]["annotations"]


def test_pod_waits_in_init_for_its_job_then_starts(dyn, namespace) -> None:
    create(dyn, namespace, job("db-init", {DURATION: "1s"}, backoff=0, suspend=True))
    create(dyn, namespace, pod("api", [{"name": "DEPENDENCY_JOBS", "value": "db-init"},
                                       {"name": "DEPENDENCY_SERVICE", "value": ""}]))
    # The same pod without dependencies: once it runs, the bed has had every
    # chance to start the gated one too.
    create(dyn, namespace, pod("control"))
    kube.wait_for(dyn, "v1", "Pod", "control", namespace, running)
    held = kube.wait_for(dyn, "v1", "Pod", "api", namespace, annotated_waiting)
    assert_held(held, "job db-init is not completed yet")

    jobs = dyn.resources.get(api_version="batch/v1", kind="Job")
    jobs.patch(name="db-init", namespace=namespace, body={"spec": {"suspend": False}},
               content_type="application/merge-patch+json")
    started = kube.wait_for(dyn, "v1", "Pod", "api", namespace, running)
    done = jobs.get(name="db-init", namespace=namespace).to_dict()
    assert kube.condition(done, "Complete")["status"] == "True"
    assert kube.condition(started, "Initialized")["lastTransitionTime"] >= done["status"]["completionTime"]
    assert started["metadata"]["annotations"][DEPENDENCIES] == "satisfied"
    assert started["status"]["initContainerStatuses"][0]["state"]["terminated"]["exitCode"] == 0


def test_pod_waits_for_ready_endpoints_of_its_service(dyn, namespace) -> None:
    create(dyn, namespace, {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "db"},
        "spec": {"selector": {"app": "db"}, "ports": [{"port": 3306}]}})
    # A backend that runs but is never Ready gives the Service no ready endpoint.
    create(dyn, namespace, pod("db-broken", labels={"app": "db"}, annotations={FAIL: "bad config"}))
    create(dyn, namespace, pod("api", [{"name": "DEPENDENCY_SERVICE", "value": f"{namespace}:db"}]))
    create(dyn, namespace, pod("control"))
    kube.wait_for(dyn, "v1", "Pod", "db-broken", namespace, running)
    kube.wait_for(dyn, "v1", "Pod", "control", namespace, running)
    held = kube.wait_for(dyn, "v1", "Pod", "api", namespace, annotated_waiting)
    assert_held(held, "service db has no ready endpoints")

    create(dyn, namespace, pod("db", labels={"app": "db"}))
    started = kube.wait_for(dyn, "v1", "Pod", "api", namespace, running)
    assert started["metadata"]["annotations"][DEPENDENCIES] == "satisfied"


def test_failing_onfailure_job_pod_restarts_and_the_job_keeps_running(dyn, namespace) -> None:
    """openstack-helm's jobs: restartPolicy OnFailure, backoffLimit 1000."""
    message = "db-sync: cannot reach database"
    create(dyn, namespace, job("db-sync", {FAIL: message, DURATION: "0s"}, backoff=1000))
    pods = dyn.resources.get(api_version="v1", kind="Pod")

    def restarted_twice(p: Dict[str, Any]) -> bool:
        statuses = (p.get("status") or {}).get("containerStatuses") or []
        return bool(statuses) and statuses[0].get("restartCount", 0) >= 2

    crashed = job_pod(dyn, namespace, "db-sync", restarted_twice)
    assert crashed["status"]["phase"] == "Running"
    status = crashed["status"]["containerStatuses"][0]
    last = status["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"], last["message"]) == (1, "Error", message)
    assert set(status["state"]) <= {"waiting", "running"}
    if "waiting" in status["state"]:
        assert status["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    # Still one pod, restarted in place; the Job is neither failed nor done.
    assert len(pods.get(namespace=namespace, label_selector="job-name=db-sync").items) == 1
    current = dyn.resources.get(api_version="batch/v1", kind="Job").get(
        name="db-sync", namespace=namespace).to_dict()
    assert kube.condition(current, "Failed") is None
    assert kube.condition(current, "Complete") is None
    assert current["status"]["active"] == 1


def test_the_job_controller_counts_restarts_against_a_small_backoff_limit(dyn, namespace) -> None:
    create(dyn, namespace, job("db-sync", {FAIL: "boom", DURATION: "0s"}, backoff=1))
    failed = kube.wait_for(dyn, "batch/v1", "Job", "db-sync", namespace, kube.has_condition("Failed"))
    assert kube.condition(failed, "Failed")["reason"] == "BackoffLimitExceeded"


def entrypoint_job(name: str) -> Dict[str, Any]:
    """A Job as openstack-helm renders one: no annotation the bed reads, an
    entrypoint init container with nothing to wait for (empty DEPENDENCY_*)."""
    body = job(name, {}, backoff=1000)
    empty = [{"name": "DEPENDENCY_SERVICE", "value": ""}, {"name": "DEPENDENCY_JOBS", "value": ""}]
    body["spec"]["template"]["spec"]["initContainers"] = pod(name, empty)["spec"]["initContainers"]
    return body


def test_a_bed_faults_entry_fails_a_stock_job_until_it_is_cleared(dyn, namespace) -> None:
    message = "db-sync: cannot reach database"
    bed_faults.set_fault(dyn, namespace, "db-sync", message)
    bed_faults.set_fault(dyn, namespace, "bare", "bad config")
    create(dyn, namespace, entrypoint_job("db-sync"))
    create(dyn, namespace, entrypoint_job("db-init"))
    # A pod no entrypoint holds: its fault is decided before kwok plays it.
    bare = pod("bare")
    bare["spec"]["restartPolicy"] = "Never"
    create(dyn, namespace, bare)

    def restarted(p: Dict[str, Any]) -> bool:
        statuses = (p.get("status") or {}).get("containerStatuses") or []
        return bool(statuses) and statuses[0].get("restartCount", 0) >= 1

    crashed = job_pod(dyn, namespace, "db-sync", restarted)
    annotations = crashed["metadata"]["annotations"]
    assert (annotations[FAIL], annotations[DEPENDENCIES]) == (message, "satisfied")
    last = crashed["status"]["containerStatuses"][0]["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"], last["message"]) == (1, "Error", message)
    done = kube.wait_for(dyn, "batch/v1", "Job", "db-init", namespace, kube.has_condition("Complete"))
    assert done["status"]["succeeded"] == 1
    failed = kube.wait_for(dyn, "v1", "Pod", "bare", namespace,
                           lambda p: (p.get("status") or {}).get("phase") == "Failed")
    assert failed["status"]["containerStatuses"][0]["state"]["terminated"]["message"] == "bad config"

    # Cleared: the pod told to fail keeps failing, as with a broken image;
    # the Job's next pod succeeds.
    bed_faults.clear_fault(dyn, namespace, "db-sync")
    count = crashed["status"]["containerStatuses"][0]["restartCount"]

    def restarted_again(p: Dict[str, Any]) -> bool:
        return p["metadata"]["name"] == crashed["metadata"]["name"] and restarted(p) and \
            p["status"]["containerStatuses"][0]["restartCount"] > count

    job_pod(dyn, namespace, "db-sync", restarted_again)
    dyn.resources.get(api_version="v1", kind="Pod").delete(
        name=crashed["metadata"]["name"], namespace=namespace)
    kube.wait_for(dyn, "batch/v1", "Job", "db-sync", namespace, kube.has_condition("Complete"))


def test_a_bed_faults_entry_chooses_the_exit_code_and_one_outcome_per_pod(dyn, namespace) -> None:
    """An upgrade check that fails with 2, and an online migration that reports
    more to do (exit 1) once before it is done (exit 0), each pod of the key
    taking the next line, the last one staying."""
    bed_faults.set_fault(dyn, namespace, "check", "exit 2: Check: Cells v2 | Result: Failure")
    bed_faults.set_fault(dyn, namespace, "migrate", "exit 1: 50 rows migrated\nexit 0: no more to migrate")
    create(dyn, namespace, job("check", {}, 0, restart="Never"))
    failed = kube.wait_for(dyn, "batch/v1", "Job", "check", namespace, kube.has_condition("Failed"))
    assert failed["status"]["failed"] == 1
    check_pod = job_pod(dyn, namespace, "check", lambda p: (p.get("status") or {}).get("phase") == "Failed")
    ended = check_pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (ended["exitCode"], ended["message"]) == (2, "Check: Cells v2 | Result: Failure")

    outcomes = []
    for _run in range(3):  # the same Job made anew, as a flow repeats its migrations
        migrate = job("migrate", {}, 0, restart="Never")
        migrate["metadata"]["labels"] = {"bed-test": "migrate"}
        create(dyn, namespace, migrate)
        kube.wait_for(dyn, "batch/v1", "Job", "migrate", namespace,
                      lambda j: kube.has_condition("Complete")(j) or kube.has_condition("Failed")(j))
        ended_pod = job_pod(dyn, namespace, "migrate",
                            lambda p: (p.get("status") or {}).get("phase") in ("Succeeded", "Failed"))
        terminated = ended_pod["status"]["containerStatuses"][0]["state"]["terminated"]
        outcomes.append((ended_pod["status"]["phase"], terminated["exitCode"], terminated.get("message", "")))
        dyn.resources.get(api_version="batch/v1", kind="Job").delete(
            name="migrate", namespace=namespace, body={"propagationPolicy": "Foreground"})
        kube.wait_for_gone(dyn, "batch/v1", "Job", namespace, "bed-test=migrate")
        kube.wait_for_gone(dyn, "v1", "Pod", namespace, "job-name=migrate")
    assert outcomes == [("Failed", 1, "50 rows migrated"), ("Succeeded", 0, "no more to migrate"),
                        ("Succeeded", 0, "no more to migrate")]


def test_claims_of_the_bed_classes_bind_and_their_volumes_go_with_them(dyn, namespace) -> None:
    def claim(name: str, cls: Optional[str]) -> Dict[str, Any]:
        spec: Dict[str, Any] = {"accessModes": ["ReadWriteOnce"],
                                "resources": {"requests": {"storage": "1Gi"}}}
        if cls:
            spec["storageClassName"] = cls
        return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": name}, "spec": spec}

    create(dyn, namespace, claim("data", "general"))
    create(dyn, namespace, claim("plain", None))

    def bound(c: Dict[str, Any]) -> bool:
        return (c.get("status") or {}).get("phase") == "Bound"
    general = kube.wait_for(dyn, "v1", "PersistentVolumeClaim", "data", namespace, bound)
    default = kube.wait_for(dyn, "v1", "PersistentVolumeClaim", "plain", namespace, bound)
    assert default["spec"]["storageClassName"] == "standard"
    pvs = dyn.resources.get(api_version="v1", kind="PersistentVolume")
    pv = pvs.get(name=general["spec"]["volumeName"]).to_dict()
    assert pv["spec"]["claimRef"]["uid"] == general["metadata"]["uid"]
    assert (pv["spec"]["storageClassName"], pv["spec"]["capacity"]["storage"]) == ("general", "1Gi")

    claims = dyn.resources.get(api_version="v1", kind="PersistentVolumeClaim")
    claims.delete(name="data", namespace=namespace)
    name = pv["metadata"]["name"]
    listed = pvs.get(field_selector=f"metadata.name={name}").to_dict()
    if listed["items"]:
        for event in pvs.watch(field_selector=f"metadata.name={name}",
                               resource_version=listed["metadata"]["resourceVersion"], timeout=60):
            if event["type"] == "DELETED":
                break
    assert not pvs.get(field_selector=f"metadata.name={name}").items


def _node_selectors(tree: Any) -> List[tuple]:
    found = []
    if isinstance(tree, dict):
        if "node_selector_key" in tree:
            found.append((tree["node_selector_key"], str(tree["node_selector_value"])))
        for value in tree.values():
            found += _node_selectors(value)
    return found


def test_nodes_carry_every_label_the_charts_schedule_on(dyn) -> None:
    source = openstack_helm.source_dir()
    wanted = set()
    for values in source.glob("*/values.yaml"):
        wanted |= set(_node_selectors(yaml.safe_load(values.read_text(encoding="utf-8"))))
    for values in compute_kit.VALUES.values():  # what openstack-helm's scripts set (l3-agent)
        wanted |= set(_node_selectors(values))
    assert {("openstack-control-plane", "enabled"), ("sriov", "enabled"), ("l3-agent", "enabled")} <= wanted
    nodes = dyn.resources.get(api_version="v1", kind="Node").get(label_selector="type=kwok").items
    assert len(nodes) >= 2
    for node in nodes:
        labels = node.to_dict()["metadata"]["labels"]
        for key, value in sorted(wanted | {("openstack-compute-node", "enabled"),
                                           ("openvswitch", "enabled")}):
            assert labels.get(key) == value, (node.metadata.name, key)


def test_a_deleted_pod_is_confirmed_gone_and_its_finalizers_are_left_to_their_owner(dyn, namespace) -> None:
    """As a kubelet: a deleted pod's deletion is confirmed (grace 0, for its
    UID), and a finalizer stays until whoever set it takes it off; then the
    pod is gone, and a new pod under the same name runs and stays."""
    pods = dyn.resources.get(api_version="v1", kind="Pod")
    hold = "bed.lcm.openstack.org/test-hold"
    body = {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "replaced", "finalizers": [hold]},
            "spec": {"restartPolicy": "Always", "containers": [{"name": "main", "image": "registry.invalid/app:1"}]}}
    first = create(dyn, namespace, body)
    kube.wait_for(dyn, "v1", "Pod", "replaced", namespace, lambda p: (p.get("status") or {}).get("phase") == "Running")
    pods.delete(name="replaced", namespace=namespace)  # the pod's own grace period: 30 s

    def confirmed(p: Dict[str, Any]) -> bool:
        return p["metadata"].get("deletionGracePeriodSeconds") == 0
    held = kube.wait_for(dyn, "v1", "Pod", "replaced", namespace, confirmed)
    assert held["metadata"]["uid"] == first["metadata"]["uid"] and held["metadata"]["finalizers"] == [hold]

    pods.patch(name="replaced", namespace=namespace, content_type="application/merge-patch+json",
               body={"metadata": {"finalizers": None}})
    kube.wait_for_gone(dyn, "v1", "Pod", namespace, "", timeout=60)
    second = create(dyn, namespace, dict(body, metadata={"name": "replaced"}))
    running = kube.wait_for(dyn, "v1", "Pod", "replaced", namespace,
                            lambda p: (p.get("status") or {}).get("phase") == "Running")
    assert running["metadata"]["uid"] == second["metadata"]["uid"] != first["metadata"]["uid"]
    assert "deletionTimestamp" not in running["metadata"]
