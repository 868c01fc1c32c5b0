"""plugins/module_utils/adapter/service_lifecycle.py: the parameters become
the flow request, handed in one call to lifecycle/flow_run.py; its result is
the task's (the diff only when asked for), its warnings the task's warnings,
its error the task's failure."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest
from support.fake_module import FakeModule, ended

from ansible_collections.lcm.openstack.plugins.module_utils.adapter import service_lifecycle as adapter
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import flow_end
from ansible_collections.lcm.openstack.plugins.modules import service_lifecycle as module

DIFF = {"before": {"state": "Operational"}, "after": {"state": "Removed"}}


def _module(check_mode: bool, **given: Any) -> FakeModule:
    return FakeModule(module, check_mode=check_mode, **dict({"service": "keystone", "namespace": "openstack"}, **given))


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> Dict[str, Any]:
    seen: Dict[str, Any] = {"calls": 0}
    monkeypatch.setattr(adapter, "client", lambda module_: object())

    def run(dyn: Any, req: Any, check_mode: bool, warnings: List[str], create_namespace: bool = False) -> Dict[str, Any]:
        seen.update(req=req, check_mode=check_mode, create_namespace=create_namespace, calls=seen["calls"] + 1)
        warnings.extend(seen.get("warnings", []))
        if seen.get("fails"):
            raise PhaseError(seen["fails"])
        return {"changed": True, "lifecycle": {}, "report": "", "diff": dict(DIFF)}
    monkeypatch.setattr(adapter.flow_run, "run", run)
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
    assert (seen["calls"], seen["check_mode"], seen["create_namespace"]) == (1, True, False)


def test_a_flow_start_hands_its_flow_and_create_namespace_over(seen: Dict[str, Any]) -> None:
    _run(_module(check_mode=False, create_namespace=True, dependency_timeout=600,
                 flow={"name": "greenfield", "action": "start", "planned": ["install", "test"], "target_version": "2025.1",
                       "from_revision": None, "result": None}))
    req = seen["req"]
    assert (req.flow, req.flow_action, tuple(req.planned), req.target_version, req.dependency_timeout) == (
        "greenfield", "start", ("install", "test"), "2025.1", 600)
    assert (seen["check_mode"], seen["create_namespace"]) == (False, True)


def test_the_diff_is_returned_only_when_asked_for(seen: Dict[str, Any]) -> None:
    assert "diff" not in _run(_module(check_mode=False, lifecycle_state="Removed"))
    mod = _module(check_mode=False, lifecycle_state="Removed")
    mod._diff = True  # pylint: disable=protected-access
    assert _run(mod)["diff"] == DIFF


def test_warnings_are_the_tasks_whether_it_succeeds_or_fails(seen: Dict[str, Any]) -> None:
    seen["warnings"] = ["the UpdateStatus was not refreshed: 403"]
    mod = _module(check_mode=False, lifecycle_state="Removed")
    assert _run(mod)["changed"] is True and mod.warnings == ["the UpdateStatus was not refreshed: 403"]
    seen["fails"] = "keystone depends on mariadb (Removed)"
    mod = _module(check_mode=False, lifecycle_state="Removed")
    end = ended(adapter.run_service_lifecycle, mod)
    assert end.failed and end.result["msg"] == "keystone depends on mariadb (Removed)"
    assert mod.warnings == ["the UpdateStatus was not refreshed: 403"]


def test_an_end_is_the_shared_flow_end_which_releases_the_lease_and_refreshes_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The end lcm.openstack.traffic's end_flow makes too (lifecycle/flow_end.py)."""
    calls: List[str] = []
    seen: Dict[str, Any] = {}

    class _Lease:
        def release(self) -> bool:
            calls.append("release")
            return True

    def run(lifecycle: Any, req: Any, check_mode: bool) -> Dict[str, Any]:
        calls.append("run")
        seen["req"] = req
        return {"changed": True, "lifecycle": {}, "report": "", "diff": {}}
    monkeypatch.setattr(adapter, "client", lambda module_: object())
    monkeypatch.setattr(flow_end, "Lifecycle", lambda *args: None)
    monkeypatch.setattr(flow_end.runner, "run", run)
    monkeypatch.setattr(flow_end.flow_lease, "holder_identity", lambda: "host/1")
    monkeypatch.setattr(flow_end.flow_lease, "FlowLease", lambda *args: _Lease())
    monkeypatch.setattr(flow_end, "refresh", lambda dyn: calls.append("refresh") or "")
    out = _run(_module(check_mode=False, lifecycle_state="Operational",
                       flow={"name": "greenfield", "action": "end", "planned": None, "target_version": None,
                             "from_revision": None, "result": "Succeeded"}))
    assert calls == ["run", "release", "refresh"]
    assert (seen["req"].flow_action, seen["req"].result) == ("end", "Succeeded")
    assert out["lease"] == "released" and out["changed"] is True
