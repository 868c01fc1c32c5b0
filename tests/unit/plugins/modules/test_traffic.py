"""plugins/modules/traffic.py: actions, backends
and selector modes are the engine's."""

from __future__ import annotations

from ansible_collections.lcm.openstack.plugins.modules import traffic as module
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.backends import ACTIONS, BACKENDS, SELECTOR_MODES
from support.module_docs import documented_options

DOCS = documented_options(module)


def test_actions_backends_and_selector_modes_are_the_engines() -> None:
    assert DOCS["action"]["choices"] == list(ACTIONS) and DOCS["backend"]["choices"] == list(BACKENDS)
    assert DOCS["selector_mode"]["choices"] == list(SELECTOR_MODES)
