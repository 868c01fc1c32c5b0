"""plugins/modules/traffic.py: actions, backends and selector modes are the
engine's; end_flow ends a flow as service_lifecycle's flow option does."""

from __future__ import annotations

from ansible_collections.lcm.openstack.plugins.modules import traffic as module
from ansible_collections.lcm.openstack.plugins.modules import service_lifecycle
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import flow_end
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.backends import ACTIONS, BACKENDS, SELECTOR_MODES
from support.module_docs import documented_options

DOCS = documented_options(module)


def test_actions_backends_and_selector_modes_are_the_engines() -> None:
    assert DOCS["action"]["choices"] == list(ACTIONS) and DOCS["backend"]["choices"] == list(BACKENDS)
    assert DOCS["selector_mode"]["choices"] == list(SELECTOR_MODES)


def test_end_flow_takes_what_service_lifecycle_takes_to_end_a_flow_and_defaults_to_a_success() -> None:
    end, lifecycle = DOCS["end_flow"]["suboptions"], documented_options(service_lifecycle)
    assert end["name"]["choices"] == lifecycle["flow"]["suboptions"]["name"]["choices"]
    assert end["result"]["choices"] == lifecycle["flow"]["suboptions"]["result"]["choices"]
    assert end["lifecycle_state"]["choices"] == lifecycle["lifecycle_state"]["choices"]
    assert (end["result"]["default"], end["lifecycle_state"]["default"]) == (flow_end.SUCCEEDED, flow_end.OPERATIONAL)
