"""plugins/module_utils/adapter/phase_info.py: the filters given reach the
listing; the result never reports a change; a refusal fails the task."""

from __future__ import annotations

from typing import Any, Dict

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.adapter import phase_info as adapter
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.modules import phase_info as module
from support.fake_module import FakeModule, ended


@pytest.fixture(autouse=True)
def no_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adapter, "client", lambda module_: object())


def test_the_filters_reach_the_listing_and_nothing_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: Dict[str, Any] = {}

    def listing(dyn: Any, namespace: Any, **filters: Any) -> Dict[str, Any]:
        asked.update(filters, namespace=namespace)
        return {"phases": [{"name": "keystone-install-1"}], "lifecycles": []}
    monkeypatch.setattr(adapter, "list_lifecycle", listing)
    end = ended(adapter.run_phase_info, FakeModule(module, namespace="openstack", service="keystone", type="install"))
    assert not end.failed and end.result["changed"] is False and end.result["phases"] == [{"name": "keystone-install-1"}]
    assert asked == {"namespace": "openstack", "service": "keystone", "phase_type": "install", "state": None, "name": None}


def test_a_refused_listing_fails_the_task_with_its_words(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*args: Any, **kwargs: Any) -> Dict[str, Any]:
        raise PhaseError("the credentials may not list phases in openstack")
    monkeypatch.setattr(adapter, "list_lifecycle", refused)
    end = ended(adapter.run_phase_info, FakeModule(module, namespace="openstack"))
    assert end.failed and end.result["msg"] == "the credentials may not list phases in openstack"
