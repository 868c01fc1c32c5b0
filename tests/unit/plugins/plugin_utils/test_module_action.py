"""plugins/plugin_utils/module_action.py: the module's payload is built with
the cyclic collector off, what it left alive is frozen until the run ends,
and the collector is left as it was found."""

from __future__ import annotations

import gc
import importlib
from typing import Any, List

import pytest
from ansible.plugins.action import ActionBase

from ansible_collections.lcm.openstack.plugins.plugin_utils import module_action
from support.paths import ROOT


@pytest.fixture(autouse=True)
def collector_back_on() -> Any:
    gc.unfreeze()
    yield
    gc.enable()
    gc.unfreeze()


@pytest.mark.parametrize("on", [True, False])
def test_the_collector_is_paused_then_left_as_it_was(on: bool) -> None:
    (gc.enable if on else gc.disable)()
    with module_action.collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled() is on


def test_what_the_build_left_alive_is_frozen_until_the_run_ends() -> None:
    """Else the collector's first pass after the build walks it all at once."""
    with module_action.unfrozen_at_the_end():
        with module_action.collector_paused():
            left = [[] for i in range(100)]
        assert gc.get_freeze_count() > len(left)
        assert gc.get_count()[0] < len(left)  # the build's allocations are not pending a pass
    assert gc.get_freeze_count() == 0


def test_objects_frozen_before_the_run_stay_frozen() -> None:
    gc.freeze()
    before = gc.get_freeze_count()
    with module_action.unfrozen_at_the_end():
        with module_action.collector_paused():
            pass
    assert gc.get_freeze_count() >= before > 0


def test_the_collector_comes_back_when_the_block_raises() -> None:
    gc.enable()
    with pytest.raises(RuntimeError):
        with module_action.collector_paused():
            raise RuntimeError("the build failed")
    assert gc.isenabled()


def test_the_payload_is_built_with_the_collector_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: List[Any] = []

    def build(self: Any, module_name: str, module_args: Any, task_vars: Any) -> Any:
        seen.append((module_name, gc.isenabled()))
        return "payload", "interpreter"
    monkeypatch.setattr(ActionBase, "_configure_module", build)
    gc.enable()
    action = module_action.ModuleAction.__new__(module_action.ModuleAction)
    assert action._configure_module("lcm.openstack.phase", {}, {}) == ("payload", "interpreter")
    assert seen == [("lcm.openstack.phase", False)]
    assert gc.isenabled()


@pytest.mark.parametrize("name", sorted(p.stem for p in (ROOT / "plugins" / "action").glob("*.py")
                                        if p.stem not in ("__init__", "flow_inputs", "flow_steps")))
def test_every_module_runs_under_the_action(name: str) -> None:
    plugin = importlib.import_module(f"ansible_collections.lcm.openstack.plugins.action.{name}")
    assert issubclass(plugin.ActionModule, module_action.ModuleAction)
