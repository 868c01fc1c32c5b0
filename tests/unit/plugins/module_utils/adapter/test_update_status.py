"""plugins/module_utils/adapter/update_status.py: the thresholds given reach
the assessment, check mode and the drift reader reach the keeper, the report comes as text and
lines; a failure fails the task."""

from __future__ import annotations

from typing import Any, Dict

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.adapter import update_status as adapter
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.modules import update_status as module
from support.fake_module import FakeModule, ended


class _Keeper:
    made: Dict[str, Any] = {}
    fails = False
    warning = ""

    def __init__(self, dyn: Any, settings: Any, check_mode: bool, drift: Any = None) -> None:
        _Keeper.made = {"settings": settings, "check_mode": check_mode, "drift": drift}

    def run(self, details: str) -> Dict[str, Any]:
        if _Keeper.fails:
            raise PhaseError("the UpdateStatus CRD (updatestatuses.lifecycle.openstack.org) is not installed")
        _Keeper.made["details"] = details
        return {"changed": True, "status": {"services": []}, "report": "No service is updating.\nline 2"}


@pytest.fixture(autouse=True)
def no_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adapter, "client", lambda module_: object())
    monkeypatch.setattr(adapter, "StatusKeeper", _Keeper)
    _Keeper.fails = False


def test_the_settings_details_and_check_mode_reach_the_keeper() -> None:
    end = ended(adapter.run_update_status, FakeModule(module, check_mode=True, details="health", pod_unready_minutes=2))
    settings = _Keeper.made["settings"]
    assert (settings.pod_unready_minutes, settings.job_expected_seconds, settings.stall_margin_seconds) == (2, 600, 600)
    assert _Keeper.made["check_mode"] is True and _Keeper.made["details"] == "health"
    # The module's refresh reads drift (the phase engine's does not: updatestatus/keeper.py refresh).
    assert _Keeper.made["drift"] is adapter.drift_read.read
    assert end.result["changed"] is True and end.result["update_status"] == {"services": []}
    assert end.result["report_lines"] == ["No service is updating.", "line 2"]


def test_a_keeper_failure_fails_the_task() -> None:
    _Keeper.fails = True
    end = ended(adapter.run_update_status, FakeModule(module))
    assert end.failed and "is not installed" in end.result["msg"]
