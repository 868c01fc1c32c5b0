"""plugins/modules/service_lifecycle.py: documented as it validates; flows,
actions, results and states are the engine's."""

from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.lcm.openstack.plugins.modules import service_lifecycle as module
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.flow import FLOW_ACTIONS, FLOW_RESULTS, FLOWS, SERVICE_STATES
from support.module_docs import built_with, differences, documented_options

DOCS = documented_options(module)


def test_the_documentation_is_the_argument_spec() -> None:
    assert differences(module.argument_spec(), DOCS) == []


def test_main_builds_the_module_from_that_spec_with_check_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    built: Any = built_with(module, monkeypatch)
    assert built["argument_spec"] == module.argument_spec() and built["supports_check_mode"] is True


def test_flows_actions_results_and_states_are_the_engines() -> None:
    flow = DOCS["flow"]["suboptions"]
    assert flow["name"]["choices"] == list(FLOWS) and flow["action"]["choices"] == list(FLOW_ACTIONS)
    assert flow["result"]["choices"] == list(FLOW_RESULTS)
    assert DOCS["lifecycle_state"]["choices"] == list(SERVICE_STATES)
