"""plugins/module_utils/site/report.py: each service's result and versions
decided from what the site run saw, and the table that ends the run."""

from __future__ import annotations

from typing import Any, Dict

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.site.report import outcome_of, summary_lines
from support.paths import UNIT_FIXTURES

CASES = yaml.safe_load((UNIT_FIXTURES / "site" / "outcomes.yaml").read_text())


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_the_result_and_versions_come_from_what_the_run_saw(case: Dict[str, Any]) -> None:
    out = outcome_of(dict(case["raw"], service="keystone", level=1, flow="update"))
    assert (out["result"], out["versions"], out["message"]) == (case["result"], case["versions"], case.get("message", ""))


def test_the_table_is_in_dependency_order_with_totals_and_each_failure_under_it() -> None:
    raw = [dict(c["raw"], service=f"s{i}", level=len(CASES) - i, flow="update", duration=3.0) for i, c in enumerate(CASES)]
    lines = summary_lines(raw)
    assert lines[0].split() == ["LEVEL", "SERVICE", "FLOW", "RESULT", "VERSIONS", "DURATION", "WAITED", "FOR"]
    assert [line.split()[1] for line in lines[1:len(CASES) + 1]] == [f"s{i}" for i in reversed(range(len(CASES)))]
    assert lines[len(CASES) + 1] == f"{len(CASES)} services: 2 Failed, 1 Nothing to do, 1 RolledBack, 3 Succeeded"
    assert lines[len(CASES) + 2:] == ["s6: keystone waits for mariadb, which is Failed", "s2: the test phase failed"]


def test_an_outcome_that_carries_its_result_is_laid_out_as_it_is() -> None:
    out = outcome_of({"service": "keystone", "result": "Succeeded", "versions": "2026.1", "message": ""})
    assert (out["result"], out["versions"]) == ("Succeeded", "2026.1")
