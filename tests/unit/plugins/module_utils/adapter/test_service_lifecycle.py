"""plugins/module_utils/adapter/service_lifecycle.py: the parameters become
the flow request; a change to the record refreshes the UpdateStatus in the
same process, a check-mode run or a run that changed nothing does not."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest
from support.fake_module import FakeModule, ended

from ansible_collections.lcm.openstack.plugins.module_utils.adapter import service_lifecycle as adapter
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError, LifecycleError
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import flow_end
from ansible_collections.lcm.openstack.plugins.modules import service_lifecycle as module


def _module(check_mode: bool, **given: Any) -> FakeModule:
    return FakeModule(module, check_mode=check_mode, **dict({"service": "keystone", "namespace": "openstack"}, **given))


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
    monkeypatch.setattr(adapter.runner, "run", run)
    monkeypatch.setattr(adapter, "refresh", refresh)
    return seen


def _run(mod: FakeModule) -> Dict[str, Any]:
    """The task's result: the run must succeed."""
    end = ended(adapter.run_service_lifecycle, mod)
    assert not end.failed, end.result
    return end.result


def test_the_request_takes_what_was_given_and_the_engines_defaults(seen: Dict[str, Any]) -> None:
    _run(_module(check_mode=True, lifecycle_state="Removed", reason=None))
    req = seen["req"]
    assert (req.service, req.release, req.namespace, req.lifecycle_state) == ("keystone", "keystone", "openstack", "Removed")
    assert (req.message, tuple(req.planned), req.target_version, req.from_revision, req.require_dependencies) == (
        "", (), "", 0, True)


def test_a_change_refreshes_the_update_status_and_a_failed_refresh_warns(seen: Dict[str, Any]) -> None:
    seen["refresh_fails"] = True
    mod = _module(check_mode=False, lifecycle_state="Removed")
    out = _run(mod)
    assert seen["refreshed"] == 1 and mod.warnings == ["the UpdateStatus was not refreshed: 403"]
    assert out["changed"] is True


def test_no_change_and_check_mode_refresh_nothing(seen: Dict[str, Any]) -> None:
    _run(_module(check_mode=True, lifecycle_state="Removed"))
    seen["changed"] = False
    _run(_module(check_mode=False, lifecycle_state="Removed"))
    assert seen["refreshed"] == 0


class _Lease:
    """The flow Lease as the adapter uses it; every call lands in `calls`."""

    def __init__(self, calls: List[str], races: int = 0) -> None:
        self.calls, self.races = calls, races

    def acquire(self, purpose: str) -> Any:
        self.calls.append("acquire")
        return type("Taken", (), {"action": "acquired", "message": "keystone: flow lease lcm-flow-keystone taken by host/1"})()

    def release(self) -> bool:
        self.calls.append("release")
        if self.races:
            self.races -= 1
            raise KubeError("another run changed the Lease lcm-flow-keystone at the same moment")
        return True


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch, seen: Dict[str, Any]) -> List[str]:
    calls: List[str] = []
    monkeypatch.setattr(adapter.flow_lease, "holder_identity", lambda: "host/1")
    monkeypatch.setattr(adapter.flow_lease, "FlowLease", lambda *args: seen.setdefault("lease", _Lease(calls)))
    monkeypatch.setattr(adapter.lease_renewer, "keep_renewed", lambda dyn, lease: calls.append("renewer"))
    run = adapter.runner.run

    def recorded(lifecycle: Any, req: Any, check_mode: bool) -> Dict[str, Any]:
        calls.append("run")
        if seen.get("fails"):
            raise LifecycleError(seen["fails"])
        return run(lifecycle, req, check_mode)
    monkeypatch.setattr(adapter.runner, "run", recorded)
    return calls


def _start(**given: Any) -> FakeModule:
    return _module(check_mode=False, flow={"name": "greenfield", "action": "start", "planned": None,
                                           "target_version": None, "from_revision": None, "result": None}, **given)


def test_a_start_that_may_wait_keeps_its_lease_renewed_from_before_the_wait(calls: List[str]) -> None:
    out = _run(_start(dependency_timeout=600, dependencies_since="2026-02-01T00:00:00Z"))
    assert calls == ["acquire", "renewer", "run"]
    assert out["lease"].startswith("keystone: flow lease")


def test_a_start_that_does_not_wait_leaves_the_renewer_once_started(calls: List[str], seen: Dict[str, Any]) -> None:
    _run(_start())
    assert calls == ["acquire", "run", "renewer"]
    assert (seen["req"].dependency_timeout, seen["req"].dependencies_since) == (0, "")


def test_a_wait_that_fails_gives_the_lease_back_even_racing_its_renewer(calls: List[str], seen: Dict[str, Any]) -> None:
    seen["fails"] = "keystone depends on mariadb (Removed)"
    seen["lease"] = _Lease(calls, races=1)
    end = ended(adapter.run_service_lifecycle, _start(dependency_timeout=600))
    assert end.failed and end.result["msg"] == "keystone depends on mariadb (Removed)"
    assert calls == ["acquire", "renewer", "run", "release", "release"]


def test_an_end_is_the_shared_flow_end_which_releases_the_lease_and_refreshes_once(
        calls: List[str], seen: Dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """The end lcm.openstack.traffic's end_flow makes too (lifecycle/flow_end.py): the
    adapter adds no refresh of its own."""
    monkeypatch.setattr(flow_end, "Lifecycle", lambda *args: None)
    monkeypatch.setattr(flow_end, "refresh", lambda dyn: calls.append("refresh") or "")
    out = _run(_module(check_mode=False, lifecycle_state="Operational",
                       flow={"name": "greenfield", "action": "end", "planned": None, "target_version": None,
                             "from_revision": None, "result": "Succeeded"}))
    assert calls == ["run", "release", "refresh"] and seen["refreshed"] == 0
    assert (seen["req"].flow_action, seen["req"].result) == ("end", "Succeeded")
    assert out["lease"] == "released" and out["changed"] is True
