"""plugins/module_utils/flows/remove.py: the remove flow's table, one case a row
of fixtures/flows/remove.yaml (every resume point, every failure point, what it
leaves out), as the playbook asks lcm.openstack.flow_steps."""

from __future__ import annotations

from typing import Any, Dict

import pytest

from support import flow_cases

CASES = flow_cases.load("remove")


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_the_table(case: Dict[str, Any]) -> None:
    flow_cases.check("remove", case)
