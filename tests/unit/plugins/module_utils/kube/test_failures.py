"""plugins/module_utils/kube/failures.py: a Job whose pods keep failing, or cannot be scheduled, fails.

The cases live in fixtures/failures/job_pods.yaml: a Job (or none, for a bare
pod) and its pods as a kubelet reports them, the policy, and what to expect.
"""

from __future__ import annotations

import copy
from typing import Any, Dict, List

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.kube import failures, readiness
from support.paths import UNIT_FIXTURES

FIXTURES = UNIT_FIXTURES / "failures"


def _cases() -> List[Any]:
    cases = yaml.safe_load((FIXTURES / "job_pods.yaml").read_text())
    return [pytest.param(c, id=c["name"]) for c in cases]


@pytest.mark.parametrize("case", _cases())
def test_judge(case: Dict[str, Any]) -> None:
    expect = case["expect"]
    assert set(expect) <= {"state", "reason", "message_contains", "count"}, expect
    policy = failures.FailurePolicy(**(case.get("policy") or {}))
    job, pods = case["job"], failures.pods_of_job(case["job"], case["pods"]) if case["job"] else case["pods"]
    before = copy.deepcopy((job, pods))
    base = readiness.assess(job if job is not None else pods[0])
    got = failures.judge(base, job, pods, policy, lambda _pod: float(case.get("unschedulable_for", 0)))
    assert (job, pods) == before, "judge must not modify what it reads"
    assert got.state == expect["state"], got
    assert got.reason == expect.get("reason", ""), got
    for text in expect.get("message_contains", []):
        assert text in got.message, got
    assert "\n" not in got.message, got
    if "count" in expect:
        assert failures.failure_count(job, pods) == expect["count"]


def test_every_case_name_is_unique() -> None:
    names = [c.values[0]["name"] for c in _cases()]
    assert len(names) == len(set(names))


def test_the_defaults_are_small() -> None:
    policy = failures.FailurePolicy()
    assert (policy.threshold, policy.unschedulable_grace) == (3, 60)


def test_last_exit_prefers_the_latest_finish() -> None:
    def pod(name: str, finished: str, message: str) -> Dict[str, Any]:
        return {"metadata": {"name": name}, "status": {"containerStatuses": [
            {"name": "c", "state": {"terminated": {"exitCode": 1, "message": message, "finishedAt": finished}}}]}}
    last = failures.last_exit([pod("b", "2026-01-01T00:00:05Z", "late"), pod("a", "2026-01-01T00:00:01Z", "early")])
    assert last is not None and last.line() == "pod b container c exited 1 (Error): late"
    assert failures.last_exit([{"metadata": {"name": "ok"}, "status": {}}]) is None


def test_one_line_cuts_a_long_message() -> None:
    assert failures.one_line("x" * 400).endswith(" ...")
    assert len(failures.one_line("x" * 400)) == failures.MESSAGE_CHARS + 4
    assert failures.one_line("first\n\nsecond  \n") == "second"
