"""plugins/module_utils/kube/diagnose.py: why an object is not ready, in one
line with what its pods do; the pods of each kind of workload; the end of a
failed container's output."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.kube import diagnose
from ansible_collections.lcm.openstack.plugins.module_utils.kube.readiness import Readiness


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
    monkeypatch.setattr(diagnose, "CoreV1Api", _NoLog)
    failed = _pod("b", "Failed", terminated={"exitCode": 137, "reason": "OOMKilled"})
    dyn = _Dyn([])
    dyn.client = None  # type: ignore[attr-defined]
    assert diagnose.log_tail(dyn, "openstack", {"kind": "Job"}, [failed]) == \
        "container keystone-db-sync exited 137 (OOMKilled); no log available"
