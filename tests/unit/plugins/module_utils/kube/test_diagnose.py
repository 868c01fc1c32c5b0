"""plugins/module_utils/kube/diagnose.py: why an object is not ready, in one
line with what (at most three of) its pods do, unless a failure rule said it
already; the pods of each kind of workload; the end of a failed container's
output (its termination message, else its log), cut to the last lines."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import pytest
from kubernetes.dynamic.exceptions import ForbiddenError

from ansible_collections.lcm.openstack.plugins.module_utils.kube import diagnose
from ansible_collections.lcm.openstack.plugins.module_utils.kube.readiness import Readiness
from support.fake_leases import error


def _pod(name: str, phase: str = "Running", waiting: Optional[str] = None,
         terminated: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    state: Dict[str, Any] = {}
    if waiting:
        state["waiting"] = {"reason": waiting, "message": f"{waiting} for keystone"}
    if terminated:
        state["terminated"] = terminated
    return {"kind": "Pod", "metadata": {"name": name},
            "status": {"phase": phase, "containerStatuses": [{"name": "keystone-db-sync", "state": state}]}}


class _Pods:
    def __init__(self, pods: List[Dict[str, Any]]) -> None:
        self.pods, self.selectors = pods, []  # type: ignore[var-annotated]

    def get(self, namespace: str, label_selector: str) -> Any:
        self.selectors.append(label_selector)
        pods = self.pods

        class _R:
            def to_dict(self) -> Dict[str, Any]:
                return {"items": pods}
        return _R()


class _Dyn:
    def __init__(self, pods: List[Dict[str, Any]]) -> None:
        self.resources, self.pods = self, _Pods(pods)

    def get(self, api_version: str, kind: str) -> _Pods:
        assert (api_version, kind) == ("v1", "Pod")
        return self.pods


def test_the_pods_of_a_job_a_deployment_and_a_pod() -> None:
    dyn = _Dyn([_pod("a")])
    job = {"kind": "Job", "metadata": {"uid": "u-1"}}
    deployment = {"kind": "Deployment", "metadata": {}, "spec": {"selector": {"matchLabels": {"b": "2", "a": "1"}}}}
    assert [p["metadata"]["name"] for p in diagnose.pods_of(dyn, "openstack", job)] == ["a"]
    diagnose.pods_of(dyn, "openstack", deployment)
    assert dyn.pods.selectors == ["batch.kubernetes.io/controller-uid=u-1", "a=1,b=2"]
    assert diagnose.pods_of(dyn, "openstack", _pod("self")) == [_pod("self")]
    assert diagnose.pods_of(dyn, "openstack", {"kind": "ConfigMap", "metadata": {}}) == []
    assert diagnose.pods_of(dyn, "openstack", {"kind": "Deployment", "metadata": {}, "spec": {}}) == []


def test_why_names_the_object_its_state_and_what_its_pods_do() -> None:
    job = {"kind": "Job", "metadata": {"uid": "u-1", "name": "keystone-db-sync"}}
    pods = [_pod("keystone-db-sync-1", "Pending", waiting="ImagePullBackOff"),
            _pod("keystone-db-sync-0", "Succeeded")]
    line = diagnose.why(_Dyn([]), "openstack", ("Job", "keystone-db-sync"),
                        Readiness("InProgress", "0/1 succeeded, 1 active"), job, pods)
    assert line.startswith("Job keystone-db-sync: 0/1 succeeded, 1 active; pod keystone-db-sync-1 ")
    assert "ImagePullBackOff" in line and "keystone-db-sync-0" not in line  # a finished pod says nothing


@pytest.mark.parametrize("state", [Readiness("Current", "complete"), Readiness("Failed", "x", "FailureThreshold")])
def test_why_stays_one_part_when_the_object_is_done_or_its_rule_said_it_all(state: Readiness) -> None:
    job = {"kind": "Job", "metadata": {"uid": "u-1"}}
    assert diagnose.why(_Dyn([_pod("p", waiting="CrashLoopBackOff")]), "openstack", ("Job", "j"), state, job) == \
        f"Job j: {state.message}"


def test_the_log_tail_is_the_termination_message_cut_to_the_last_lines() -> None:
    message = "\n".join(f"line {n}" for n in range(1, 31))
    failed = _pod("keystone-db-sync-0", "Failed", terminated={"exitCode": 1, "reason": "Error", "message": message})
    tail = diagnose.log_tail(_Dyn([]), "openstack", {"kind": "Job"}, [failed])
    assert tail.splitlines() == [f"line {n}" for n in range(11, 31)]


def test_a_container_that_exited_zero_has_no_tail_and_one_without_a_log_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    ok = _pod("a", "Succeeded", terminated={"exitCode": 0, "reason": "Completed"})
    assert diagnose.log_tail(_Dyn([]), "openstack", {"kind": "Job"}, [ok]) == ""

    class _NoLog:
        def __init__(self, client: Any) -> None:
            pass

        def read_namespaced_pod_log(self, *args: Any, **kwargs: Any) -> str:
            raise ValueError("no client")
    monkeypatch.setattr(diagnose, "core_v1_api", lambda: _NoLog)
    failed = _pod("b", "Failed", terminated={"exitCode": 137, "reason": "OOMKilled"})
    dyn = _Dyn([])
    dyn.client = None  # type: ignore[attr-defined]
    assert diagnose.log_tail(dyn, "openstack", {"kind": "Job"}, [failed]) == \
        "container keystone-db-sync exited 137 (OOMKilled); no log available"


def _unscheduled(name: str) -> Dict[str, Any]:
    pod = _pod(name, "Pending")
    pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                    "message": "0/3 nodes are available: 3 Insufficient memory."}]
    return pod


def test_why_asks_the_cluster_for_the_pods_when_the_waiter_saw_none_and_names_three_at_most() -> None:
    dyn = _Dyn([_unscheduled(f"keystone-api-{n}") for n in range(5)])
    deployment = {"kind": "Deployment", "metadata": {"name": "keystone-api"},
                  "spec": {"selector": {"matchLabels": {"application": "keystone", "component": "api"}}}}
    line = diagnose.why(dyn, "openstack", ("Deployment", "keystone-api"), Readiness("InProgress", "0/5 available"),
                        deployment)
    assert dyn.pods.selectors == ["application=keystone,component=api"]
    parts = line.split("; ")
    assert parts[0] == "Deployment keystone-api: 0/5 available"
    assert [p.split(" ")[1] for p in parts[1:]] == ["keystone-api-0", "keystone-api-1", "keystone-api-2"]
    assert all("Unschedulable" in p and "Insufficient memory" in p for p in parts[1:])


def test_why_says_the_state_when_there_is_no_message_and_no_more_without_the_object() -> None:
    dyn = _Dyn([_pod("p", waiting="CrashLoopBackOff")])
    assert diagnose.why(dyn, "openstack", ("StatefulSet", "mariadb"), Readiness("InProgress", ""), None) == \
        "StatefulSet mariadb: InProgress"
    assert dyn.pods.selectors == []  # nothing asked of the cluster


@pytest.mark.parametrize("reason", ["FailureThreshold", "Unschedulable"])
def test_a_failure_rule_that_named_the_pod_is_not_said_twice(reason: str) -> None:
    dyn = _Dyn([_pod("keystone-db-sync-0", waiting="CrashLoopBackOff")])
    job = {"kind": "Job", "metadata": {"uid": "u-1"}}
    state = Readiness("Failed", "pod keystone-db-sync-0: container keystone-db-sync exited 1 (Error)", reason)
    assert diagnose.why(dyn, "openstack", ("Job", "keystone-db-sync"), state, job) == \
        f"Job keystone-db-sync: {state.message}"
    assert dyn.pods.selectors == []


def test_a_pod_speaks_for_itself() -> None:
    pod = _pod("keystone-api-0", "Pending", waiting="ImagePullBackOff")
    assert diagnose.why(_Dyn([]), "openstack", ("Pod", "keystone-api-0"), Readiness("InProgress", "Pending"), pod) == \
        "Pod keystone-api-0: Pending"


def test_pods_that_cannot_be_listed_are_no_pods() -> None:
    class _Refused(_Dyn):
        def get(self, api_version: str, kind: str) -> _Pods:
            raise error(ForbiddenError, 403)
    job = {"kind": "Job", "metadata": {"uid": "u-1", "name": "keystone-db-sync"}}
    assert diagnose.pods_of(_Refused([]), "openstack", job) == []
    line = diagnose.why(_Refused([]), "openstack", ("Job", "keystone-db-sync"), Readiness("InProgress", "1 active"),
                        job)
    assert line == "Job keystone-db-sync: 1 active"


class _Logs:
    """CoreV1Api as log_tail uses it: each read recorded, answered with `text`."""
    reads: List[Any] = []
    text = ""

    def __init__(self, client: Any) -> None:
        pass

    def read_namespaced_pod_log(self, name: str, namespace: str, container: str, tail_lines: int) -> str:
        _Logs.reads.append((name, namespace, container, tail_lines))
        return _Logs.text


@pytest.fixture
def logs(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(diagnose, "core_v1_api", lambda: _Logs)
    monkeypatch.setattr(_Logs, "reads", [])
    monkeypatch.setattr(_Logs, "text", "")
    return _Logs


def test_without_a_termination_message_the_log_of_the_failed_container_is_read(logs: Any) -> None:
    logs.text = "".join(f"step {n}\n" for n in range(1, 41)) + "\n\n"
    pod = _pod("keystone-db-sync-0", "Failed", terminated={"exitCode": 2, "reason": "Error"})
    dyn = _Dyn([pod])
    dyn.client = object()  # type: ignore[attr-defined]
    tail = diagnose.log_tail(dyn, "openstack", {"kind": "Job", "metadata": {"uid": "u-1"}})
    assert dyn.pods.selectors == ["batch.kubernetes.io/controller-uid=u-1"]  # no pods given: asked for
    assert logs.reads == [("keystone-db-sync-0", "openstack", "keystone-db-sync", 20)]
    assert tail.splitlines() == [f"step {n}" for n in range(21, 41)]


def test_the_last_pod_that_failed_speaks_and_a_restarted_or_init_container_counts(logs: Any) -> None:
    restarted = _pod("keystone-api-1", "Running")
    restarted["status"]["containerStatuses"][0]["lastState"] = {
        "terminated": {"exitCode": 1, "reason": "Error", "message": "keystone.conf: no [database] connection"}}
    init = _pod("keystone-api-0", "Pending")
    init["status"]["initContainerStatuses"] = [{"name": "init", "state": {
        "terminated": {"exitCode": 1, "reason": "Error", "message": "dependency keystone-db-sync not complete"}}}]
    assert diagnose.log_tail(_Dyn([]), "openstack", {"kind": "Deployment"}, [init, restarted]) == \
        "keystone.conf: no [database] connection"
    assert diagnose.log_tail(_Dyn([]), "openstack", {"kind": "Deployment"}, [init]) == \
        "dependency keystone-db-sync not complete"
    assert logs.reads == []


def test_a_long_tail_is_cut_to_its_last_characters() -> None:
    message = "x" * 3000 + "\n" + "y" * 3000
    failed = _pod("a", "Failed", terminated={"exitCode": 1, "reason": "Error", "message": message})
    tail = diagnose.log_tail(_Dyn([]), "openstack", {"kind": "Job"}, [failed])
    assert len(tail) == diagnose.LOG_CHARS and tail.endswith("y" * 3000) and tail.startswith("x")


def test_an_empty_log_says_the_exit_and_nothing_failed_says_nothing(logs: Any) -> None:
    failed = _pod("b", "Failed", terminated={"exitCode": 1, "reason": "Error"})
    dyn = _Dyn([])
    dyn.client = object()  # type: ignore[attr-defined]
    assert diagnose.log_tail(dyn, "openstack", {"kind": "Job"}, [failed]) == \
        "container keystone-db-sync exited 1 (Error); no log available"
    assert diagnose.log_tail(dyn, "openstack", {"kind": "Job", "metadata": {"uid": "u-1"}}) == ""
