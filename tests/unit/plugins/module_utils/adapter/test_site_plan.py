"""plugins/module_utils/adapter/site_plan.py: the plan never reports a
change; a broken inventory fails the task before any connection; the host
vars the plan does not read (values, with their passwords) are not echoed."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.adapter import site_plan as adapter
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.modules import site_plan as module
from support.fake_module import FakeModule, ended

SITE = [{"service": "mariadb", "chart": "mariadb", "version": "10.6", "values": {"password": "s3cr3t-root"}},
        {"service": "keystone", "chart": "keystone", "version": "2026.1", "depends_on": ["mariadb"],
         "values": {"endpoints": {"identity": {"auth": {"admin": {"password": "s3cr3t-admin"}}}}}}]


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> List[Any]:
    made: List[Any] = []

    def client(module_: Any) -> str:
        made.append(module_)
        return "dyn"
    monkeypatch.setattr(adapter, "client", client)
    return made


def test_the_plan_reads_the_sites_namespaces_and_changes_nothing(monkeypatch: pytest.MonkeyPatch,
                                                                 connections: List[Any]) -> None:
    asked: Dict[str, Any] = {}

    def read(dyn: Any, namespaces: List[str]) -> Dict[Any, Any]:
        asked.update(dyn=dyn, namespaces=namespaces)
        return {("openstack", "mariadb"): {"metadata": {"name": "mariadb", "namespace": "openstack"},
                                           "status": {"state": "Operational", "currentVersion": "10.6"}}}
    monkeypatch.setattr(adapter, "read_records", read)
    end = ended(adapter.run_site_plan, FakeModule(module, check_mode=True, services=SITE, from_charts=False))
    assert not end.failed and end.result["changed"] is False
    assert asked == {"dyn": "dyn", "namespaces": ["openstack"]} and len(connections) == 1
    assert [(s["service"], s["flow"]) for s in end.result["services"]] == [("mariadb", "nothing"), ("keystone", "greenfield")]
    assert end.result["levels"] == [["mariadb"], ["keystone"]] and "summary" in end.result


def test_values_are_not_echoed_back(monkeypatch: pytest.MonkeyPatch, connections: List[Any]) -> None:
    monkeypatch.setattr(adapter, "read_records", lambda dyn, namespaces: {})
    end = ended(adapter.run_site_plan, FakeModule(module, services=SITE))
    assert "s3cr3t" not in repr(end.result)
    assert end.result["invocation"]["services"] == [
        {"service": "mariadb", "version": "10.6"}, {"service": "keystone", "version": "2026.1", "depends_on": ["mariadb"]}]


def test_a_broken_inventory_fails_before_any_connection(connections: List[Any]) -> None:
    broken = SITE + [{"service": "placement", "version": "2026.1", "depends_on": ["nova"]}]
    end = ended(adapter.run_site_plan, FakeModule(module, services=broken))
    assert end.failed and connections == []
    assert end.result["msg"].startswith("placement depends on nova, which is not in the site: add it to group "
                                        "openstack_services or remove it from depends_on")


def test_external_lets_a_slice_depend_on_another(monkeypatch: pytest.MonkeyPatch, connections: List[Any]) -> None:
    monkeypatch.setattr(adapter, "read_records", lambda dyn, namespaces: {})
    slice_ = [{"service": "keystone", "version": "2026.1", "depends_on": ["mariadb"]}]
    end = ended(adapter.run_site_plan, FakeModule(module, services=slice_, external=True))
    assert not end.failed and end.result["services"][0]["depends_on"][0]["external"] is True


def test_a_refused_read_fails_the_task_with_its_words(monkeypatch: pytest.MonkeyPatch, connections: List[Any]) -> None:
    def refused(dyn: Any, namespaces: List[str]) -> Dict[Any, Any]:
        raise PhaseError("forbidden: the credentials in use may not list servicelifecycles in namespace openstack")
    monkeypatch.setattr(adapter, "read_records", refused)
    end = ended(adapter.run_site_plan, FakeModule(module, services=SITE, action="remove", from_charts=False))
    assert end.failed and end.result["msg"].startswith("forbidden: the credentials in use may not list")
