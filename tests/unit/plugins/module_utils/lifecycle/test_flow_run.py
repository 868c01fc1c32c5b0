"""plugins/module_utils/lifecycle/flow_run.py: one call for what
lcm.openstack.service_lifecycle asks - an end is the flow end every module
makes, anything else a start (or a record set) with its options."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import flow_run
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.flow import LifecycleRequest


@pytest.fixture
def called(monkeypatch: pytest.MonkeyPatch) -> List[Any]:
    called: List[Any] = []

    def end(dyn: Any, req: LifecycleRequest, check_mode: bool, warnings: List[str]) -> Dict[str, Any]:
        called.append(("end", req.flow_action, check_mode))
        warnings.append("from the end")
        return {"changed": True}

    def start(dyn: Any, req: LifecycleRequest, check_mode: bool, warnings: List[str],
              create_namespace: bool = False) -> Dict[str, Any]:
        called.append(("start", req.flow_action, check_mode, create_namespace))
        return {"changed": False}
    monkeypatch.setattr(flow_run.flow_end, "end", end)
    monkeypatch.setattr(flow_run, "start", start)
    return called


def _req(action: Optional[str]) -> LifecycleRequest:
    return LifecycleRequest(service="keystone", release="keystone", namespace="openstack",
                            flow="greenfield" if action else None, flow_action=action, result="Succeeded")


def test_an_end_is_the_flow_end_every_module_makes(called: List[Any]) -> None:
    warnings: List[str] = []
    assert flow_run.run(object(), _req("end"), True, warnings, create_namespace=True) == {"changed": True}
    assert called == [("end", "end", True)] and warnings == ["from the end"]


@pytest.mark.parametrize("action", ["start", None])
def test_a_start_or_a_record_set_is_the_start_with_its_options(called: List[Any], action: Optional[str]) -> None:
    assert flow_run.run(object(), _req(action), False, [], create_namespace=True) == {"changed": False}
    assert called == [("start", action, False, True)]
