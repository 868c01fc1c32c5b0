"""plugins/modules/phase_info.py: documented as it validates; the phase types and
states it filters on are the engine's."""

from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.lcm.openstack.plugins.modules import phase_info as module
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import PHASE_STATES, PHASE_TYPES
from support.module_docs import built_with, differences, documented_options

DOCS = documented_options(module)


def test_the_documentation_is_the_argument_spec() -> None:
    assert differences(module.argument_spec(), DOCS) == []


def test_main_builds_the_module_from_that_spec_with_check_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    built: Any = built_with(module, monkeypatch)
    assert built["argument_spec"] == module.argument_spec() and built["supports_check_mode"] is True


def test_it_filters_on_the_engines_phase_types_and_states() -> None:
    assert DOCS["type"]["choices"] == list(PHASE_TYPES) and DOCS["state"]["choices"] == list(PHASE_STATES)
    assert not any(option.get("required") for option in DOCS.values() if "choices" in option)
