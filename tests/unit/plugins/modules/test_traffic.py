"""plugins/modules/traffic.py: documented as it validates; actions, backends
and selector modes are the engine's."""

from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.lcm.openstack.plugins.modules import traffic as module
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.backends import ACTIONS, BACKENDS, SELECTOR_MODES
from support.module_docs import built_with, differences, documented_options

DOCS = documented_options(module)


def test_the_documentation_is_the_argument_spec() -> None:
    assert differences(module.argument_spec(), DOCS) == []


def test_main_builds_the_module_from_that_spec_with_check_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    built: Any = built_with(module, monkeypatch)
    assert built["argument_spec"] == module.argument_spec() and built["supports_check_mode"] is True


def test_actions_backends_and_selector_modes_are_the_engines() -> None:
    assert DOCS["action"]["choices"] == list(ACTIONS) and DOCS["backend"]["choices"] == list(BACKENDS)
    assert DOCS["selector_mode"]["choices"] == list(SELECTOR_MODES)
