"""resume.verdict: what a re-run with the same inputs does with each object
a failed run left. Cases in fixtures/resume/verdicts.yaml."""

from __future__ import annotations


import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.phase.resume import EarlierRun, verdict
from support.paths import UNIT_FIXTURES

CASES = yaml.safe_load((UNIT_FIXTURES / "resume" / "verdicts.yaml").read_text())


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_verdict(case) -> None:
    earlier = EarlierRun(**case["earlier"])
    assert verdict(case["object"], earlier) == (case["verdict"], case["why"])


def test_the_earlier_run_is_read_from_the_phase_status() -> None:
    phase = {"status": {"state": "Failed", "failedObject": "Job/db-sync", "reason": "Timeout"}}
    assert EarlierRun.of(phase) == EarlierRun("Job/db-sync", "Timeout")
    assert EarlierRun.of({}) == EarlierRun(None, None)
