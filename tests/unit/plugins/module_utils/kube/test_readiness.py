"""plugins/module_utils/kube/readiness.py: when a Kubernetes object has reached its goal.

The cases live in fixtures/readiness/*.yaml, one file per kind; each case is
{name, expect: {state, reason?, message_contains?}, object}.
"""

from __future__ import annotations

import copy
from typing import Any, Dict, List

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.kube import readiness
from support.paths import UNIT_FIXTURES

FIXTURES = UNIT_FIXTURES / "readiness"
FILES = ["job", "pod", "deployment", "statefulset", "daemonset", "pvc", "service", "custom", "plain"]


def _cases() -> List[Any]:
    params = []
    for stem in FILES:
        for case in yaml.safe_load((FIXTURES / f"{stem}.yaml").read_text()) or []:
            params.append(pytest.param(case, id=f"{stem}:{case['name']}"))
    return params


CASES = _cases()
STATES = {readiness.CURRENT, readiness.IN_PROGRESS, readiness.FAILED, readiness.TERMINATING,
          readiness.NOT_FOUND, readiness.UNKNOWN}


@pytest.mark.parametrize("case", CASES)
def test_assess(case: Dict[str, Any]) -> None:
    expect = case["expect"]
    assert set(expect) <= {"state", "reason", "message_contains"}, f"unknown expect keys: {expect}"
    assert expect["state"] in STATES, f"fixture expects unknown state {expect['state']!r}"
    obj = case["object"]
    before = copy.deepcopy(obj)
    got = readiness.assess(obj)
    assert obj == before, "assess must not modify the object"
    assert got.state == expect["state"], got
    if "reason" in expect:
        assert got.reason == expect["reason"], got
    if got.state == readiness.FAILED:
        assert got.reason, f"a Failed result must carry a reason: {got}"
    else:
        assert got.reason == "", f"only Failed results carry a reason: {got}"
    if "message_contains" in expect:
        assert expect["message_contains"] in got.message, got
    assert got.message and "\n" not in got.message, got
    assert got.terminal is (got.state in (readiness.CURRENT, readiness.FAILED))


def test_fixture_files_are_all_loaded_and_names_unique() -> None:
    on_disk = sorted(p.stem for p in FIXTURES.glob("*.yaml"))
    assert on_disk == sorted(FILES), "every fixture file must be listed in FILES (and exist)"
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)), "duplicate case names"
    assert all(ids.count(i) == 1 for i in ids)


def test_every_dispatched_kind_has_a_fixture() -> None:
    kinds = {c.values[0]["object"].get("kind") for c in CASES}
    missing = set(readiness._BY_KIND) - kinds  # pylint: disable=protected-access
    assert not missing, f"kinds without a fixture case: {sorted(missing)}"


def test_none_is_not_found() -> None:
    got = readiness.assess(None)
    assert got == readiness.Readiness(readiness.NOT_FOUND, "not found")
    assert not got.terminal


@pytest.mark.parametrize("state,terminal", [
    (readiness.CURRENT, True), (readiness.FAILED, True), (readiness.IN_PROGRESS, False),
    (readiness.TERMINATING, False), (readiness.NOT_FOUND, False), (readiness.UNKNOWN, False),
])
def test_terminal(state: str, terminal: bool) -> None:
    assert readiness.Readiness(state, "m").terminal is terminal


def test_readiness_is_frozen() -> None:
    result = readiness.Readiness(readiness.CURRENT, "exists")
    with pytest.raises(AttributeError):
        result.state = readiness.FAILED  # type: ignore[misc]


def _pod(phase: str, conditions: Any = None, init: Any = None, containers: Any = None) -> Dict[str, Any]:
    status: Dict[str, Any] = {"phase": phase}
    if conditions is not None:
        status["conditions"] = conditions
    if init is not None:
        status["initContainerStatuses"] = init
    if containers is not None:
        status["containerStatuses"] = containers
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "status": status}


def _waiting(name: str, reason: str, message: str = "") -> Dict[str, Any]:
    waiting = {"reason": reason, **({"message": message} if message else {})}
    return {"name": name, "ready": False, "state": {"waiting": waiting}}


EXPLAIN = [
    pytest.param(
        _pod("Pending", conditions=[{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                     "message": "0/2 nodes are available: 2 Insufficient cpu."}]),
        "Pending: Unschedulable: 0/2 nodes are available: 2 Insufficient cpu.", id="unschedulable"),
    pytest.param(
        _pod("Pending", conditions=[{"type": "PodScheduled", "status": "True"}],
             containers=[_waiting("api", "ContainerCreating")]),
        "Pending: ContainerCreating", id="container-creating"),
    pytest.param(
        _pod("Running", containers=[_waiting("api", "CrashLoopBackOff", "back-off 5m0s restarting failed container")]),
        "Running: container api CrashLoopBackOff: back-off 5m0s restarting failed container", id="crashloop"),
    pytest.param(
        _pod("Failed", containers=[{"name": "main", "state": {"terminated": {
            "exitCode": 1, "reason": "Error", "message": "could not reach the database"}}}]),
        "Failed: container main exited 1 (Error): could not reach the database", id="nonzero-exit"),
    pytest.param(
        _pod("Failed", containers=[{"name": "main", "state": {"terminated": {"exitCode": 2, "reason": "Error"}}}]),
        "Failed: container main exited 2 (Error)", id="nonzero-exit-no-message"),
    pytest.param(
        _pod("Pending", init=[_waiting("setup", "ImagePullBackOff", "Back-off pulling image \"x:1\"")],
             containers=[_waiting("api", "PodInitializing")]),
        "Pending: init container setup ImagePullBackOff: Back-off pulling image \"x:1\"", id="init-waiting"),
    pytest.param(
        _pod("Pending", init=[{"name": "a", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
                              {"name": "b", "state": {"running": {}}}],
             containers=[_waiting("api", "PodInitializing")]),
        "Pending: init container b running", id="init-running"),
    pytest.param(
        _pod("Pending", init=[{"name": "migrate", "state": {"terminated": {"exitCode": 3, "reason": "Error"}}}],
             containers=[_waiting("api", "PodInitializing")]),
        "Pending: init container migrate exited 3 (Error)", id="init-failed-before-containers"),
    pytest.param(
        _pod("Running", conditions=[{"type": "Ready", "status": "False"}],
             containers=[{"name": "api", "ready": False, "state": {"running": {}}},
                         {"name": "proxy", "ready": True, "state": {"running": {}}}]),
        "Running, not Ready (waiting on api)", id="running-not-ready"),
    pytest.param(_pod("Pending"), "Pending", id="just-phase"),
    pytest.param({"kind": "Pod", "metadata": {"name": "p"}}, "Pending", id="no-status"),
]


@pytest.mark.parametrize("pod,expected", EXPLAIN)
def test_explain_pod(pod: Dict[str, Any], expected: str) -> None:
    assert readiness.explain_pod(pod) == expected


def test_assess_pod_in_progress_uses_explain_pod() -> None:
    pod = _pod("Pending", conditions=[{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                       "message": "0/1 nodes are available"}])
    got = readiness.assess(pod)
    assert got.state == readiness.IN_PROGRESS
    assert got.message == readiness.explain_pod(pod)


@pytest.mark.parametrize("reason", sorted(readiness.STALLED_WAITING))
def test_every_stalled_waiting_reason_fails_the_pod(reason: str) -> None:
    got = readiness.assess(_pod("Pending", containers=[_waiting("api", reason)]))
    assert (got.state, got.reason) == (readiness.FAILED, reason)


@pytest.mark.parametrize("policy, state", [("Never", readiness.IN_PROGRESS), ("OnFailure", readiness.IN_PROGRESS),
                                           ("Always", readiness.CURRENT)])
def test_a_test_pod_is_done_when_it_succeeded_not_when_ready(policy: str, state: str) -> None:
    """A rally pod is Ready while its tests run; only Succeeded ends the test phase."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "keystone-test"},
           "spec": {"restartPolicy": policy},
           "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
                      "containerStatuses": [{"name": "test", "ready": True, "state": {"running": {}}}]}}
    assert readiness.assess(pod).state == state
