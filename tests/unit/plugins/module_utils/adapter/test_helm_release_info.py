"""plugins/module_utils/adapter/helm_release_info.py: what is asked reaches
the release reader; its answer never reports a change; a failure fails the
task with the values masked."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.adapter import helm_release_info as adapter
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import MASK, Redactor
from ansible_collections.lcm.openstack.plugins.modules import helm_release_info as module
from support.fake_module import FakeModule, ended

SECRET = "a-long-db-passw0rd"


@pytest.fixture(autouse=True)
def no_helm(monkeypatch: pytest.MonkeyPatch) -> None:
    redactor = Redactor()
    redactor.add_values({"password": SECRET})
    monkeypatch.setattr(adapter, "helm_cli", lambda module_: (object(), redactor))


def test_what_is_asked_reaches_the_reader_and_nothing_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: List[Any] = []

    def reader(helm: Any, namespace: str, name: Any, all_values: bool) -> List[Dict[str, Any]]:
        asked.append((namespace, name, all_values))
        return [{"name": "keystone", "revision": 3}]
    monkeypatch.setattr(adapter, "release_info", reader)
    end = ended(adapter.run_helm_release_info, FakeModule(module, namespace="openstack", name="keystone"))
    assert asked == [("openstack", "keystone", False)]
    assert not end.failed and end.result["changed"] is False and end.result["releases"] == [{"name": "keystone", "revision": 3}]


def test_a_failure_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any) -> List[Dict[str, Any]]:
        raise PhaseError(f"helm get values failed: password {SECRET} rejected", command=f"helm --set p={SECRET}")
    monkeypatch.setattr(adapter, "release_info", broken)
    end = ended(adapter.run_helm_release_info, FakeModule(module, namespace="openstack"))
    assert end.failed and SECRET not in str(end.result) and MASK in end.result["msg"] and MASK in end.result["command"]
