"""plugins/modules/service_lifecycle.py: flows,
actions, results and states are the engine's."""

from __future__ import annotations

from ansible_collections.lcm.openstack.plugins.modules import service_lifecycle as module
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.flow import FLOW_ACTIONS, FLOW_RESULTS, FLOWS, SERVICE_STATES
from support.module_docs import documented_options

DOCS = documented_options(module)


def test_flows_actions_results_and_states_are_the_engines() -> None:
    flow = DOCS["flow"]["suboptions"]
    assert flow["name"]["choices"] == list(FLOWS) and flow["action"]["choices"] == list(FLOW_ACTIONS)
    assert flow["result"]["choices"] == list(FLOW_RESULTS)
    assert DOCS["lifecycle_state"]["choices"] == list(SERVICE_STATES)
