"""plugins/modules: every module is documented as it validates (its own
options and its doc fragments', option by option), and main() builds it from
that argument spec with check mode supported."""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.action import flow_inputs as action

from support.module_docs import built_with, differences, documented_options
from support.paths import ROOT

# A module that an action plugin of the same name runs on the controller
# carries only the documentation (as ansible.builtin.set_fact does).
ACTIONS = sorted(p.stem for p in (ROOT / "plugins" / "action").glob("*.py") if p.stem != "__init__")
MODULES = sorted(p.stem for p in (ROOT / "plugins" / "modules").glob("*.py") if p.stem not in ("__init__", *ACTIONS))


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"ansible_collections.lcm.openstack.plugins.modules.{name}")


def test_every_module_is_here() -> None:
    assert ACTIONS == ["flow_inputs"]
    assert MODULES == ["helm_release", "helm_release_info", "phase", "phase_info", "service_lifecycle", "site_plan", "traffic",
                       "update_status"]


@pytest.mark.parametrize("name", MODULES)
def test_the_documentation_is_the_argument_spec(name: str) -> None:
    module = _module(name)
    assert differences(module.argument_spec(), documented_options(module)) == []


@pytest.mark.parametrize("name", MODULES)
def test_main_builds_the_module_from_that_spec_with_check_mode(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    module = _module(name)
    built = built_with(module, monkeypatch)
    assert built["argument_spec"] == module.argument_spec() and built["supports_check_mode"] is True


def test_the_action_plugins_options_are_documented_on_their_module() -> None:
    documented = yaml.safe_load(_module("flow_inputs").DOCUMENTATION)["options"]
    assert set(documented) == set(action._ARGS)
