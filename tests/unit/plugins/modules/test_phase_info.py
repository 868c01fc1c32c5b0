"""plugins/modules/phase_info.py: the phase types and
states it filters on are the engine's."""

from __future__ import annotations

from ansible_collections.lcm.openstack.plugins.modules import phase_info as module
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import PHASE_STATES, PHASE_TYPES
from support.module_docs import documented_options

DOCS = documented_options(module)


def test_it_filters_on_the_engines_phase_types_and_states() -> None:
    assert DOCS["type"]["choices"] == list(PHASE_TYPES) and DOCS["state"]["choices"] == list(PHASE_STATES)
    assert not any(option.get("required") for option in DOCS.values() if "choices" in option)
