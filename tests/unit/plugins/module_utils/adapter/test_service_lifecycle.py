"""plugins/module_utils/adapter/service_lifecycle.py: the parameters become
the flow request; a change to the record refreshes the UpdateStatus in the
same process, a check-mode run or a run that changed nothing does not."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.adapter import service_lifecycle as adapter
from ansible_collections.lcm.openstack.plugins.modules import service_lifecycle as module


class _Exit(Exception):
    pass


class _Module:
    def __init__(self, check_mode: bool, **given: Any) -> None:
        self.params: Dict[str, Any] = {name: option.get("default") for name, option in module.argument_spec().items()}
        self.params.update(service="keystone", namespace="openstack")
        self.params.update(given)
        self.check_mode, self._diff = check_mode, False
        self.warnings: List[str] = []
        self.exited: Dict[str, Any] = {}

    def warn(self, warning: str) -> None:
        self.warnings.append(warning)

    def exit_json(self, **result: Any) -> None:
        self.exited = result
        raise _Exit()

    def fail_json(self, **result: Any) -> None:
        raise AssertionError(result)


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> Dict[str, Any]:
    seen: Dict[str, Any] = {"refreshed": 0, "changed": True}
    monkeypatch.setattr(adapter, "client", lambda module_: object())
    monkeypatch.setattr(adapter, "Lifecycle", lambda *args: None)

    def run(lifecycle: Any, req: Any, check_mode: bool) -> Dict[str, Any]:
        seen["req"] = req
        return {"changed": seen["changed"], "lifecycle": {}, "report": "", "diff": {}}

    def refresh(dyn: Any) -> str:
        seen["refreshed"] += 1
        return "the UpdateStatus was not refreshed: 403" if seen.get("refresh_fails") else ""
    monkeypatch.setattr(adapter.flow, "run", run)
    monkeypatch.setattr(adapter, "refresh", refresh)
    return seen


def _run(mod: _Module) -> _Module:
    with pytest.raises(_Exit):
        adapter.run_service_lifecycle(mod)
    return mod


def test_the_request_takes_what_was_given_and_the_engines_defaults(seen: Dict[str, Any]) -> None:
    _run(_Module(check_mode=True, lifecycle_state="Removed", reason=None))
    req = seen["req"]
    assert (req.service, req.release, req.namespace, req.lifecycle_state) == ("keystone", "keystone", "openstack", "Removed")
    assert (req.message, tuple(req.planned), req.target_version, req.from_revision, req.require_dependencies) == (
        "", (), "", 0, True)


def test_a_change_refreshes_the_update_status_and_a_failed_refresh_warns(seen: Dict[str, Any]) -> None:
    seen["refresh_fails"] = True
    mod = _run(_Module(check_mode=False, lifecycle_state="Removed"))
    assert seen["refreshed"] == 1 and mod.warnings == ["the UpdateStatus was not refreshed: 403"]
    assert mod.exited["changed"] is True


def test_no_change_and_check_mode_refresh_nothing(seen: Dict[str, Any]) -> None:
    _run(_Module(check_mode=True, lifecycle_state="Removed"))
    seen["changed"] = False
    _run(_Module(check_mode=False, lifecycle_state="Removed"))
    assert seen["refreshed"] == 0
