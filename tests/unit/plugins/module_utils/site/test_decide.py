"""plugins/module_utils/site/decide.py: the flow each ServiceLifecycle record
asks for, deploying and removing. Cases in fixtures/site/records.yaml."""

from __future__ import annotations

from typing import Any, Dict

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.site.decide import Decision, for_deploy, for_remove
from support.paths import UNIT_FIXTURES

CASES = yaml.safe_load((UNIT_FIXTURES / "site" / "records.yaml").read_text())


def _record(case: Dict[str, Any]) -> Any:
    if case["record"] is None:
        return None
    return dict(case["record"], metadata={"name": "keystone", "namespace": "openstack"})


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_deploy(case: Dict[str, Any]) -> None:
    assert for_deploy(_record(case), case["target"]) == Decision(*case["deploy"])


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_remove(case: Dict[str, Any]) -> None:
    assert for_remove(_record(case)) == Decision(*case["remove"])


def test_every_flow_of_a_deploy_has_a_case() -> None:
    assert {c["deploy"][0] for c in CASES} == {"greenfield", "update", "nothing"}
    assert {c["remove"][0] for c in CASES} == {"remove", "nothing"}


def test_the_version_is_compared_as_written_as_the_flows_compare_it() -> None:
    """The update flow's table (flows/steps.py operational_at) compares the strings: 2025.01 is not 2025.1 there either."""
    record = {"status": {"state": "Operational", "currentVersion": "2025.1"}}
    assert for_deploy(record, "2025.01").flow == "update"
