"""plugins/module_utils/adapter/site_plan.py: the plan never reports a
change; a broken inventory fails the task before any connection; the host
vars the plan does not read (values, with their passwords) are not echoed."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.adapter import site_plan as adapter
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.drift.model import ObjectDrift, ReleaseDrift
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
    compared: List[Any] = []

    def releases(dyn: Any, asks: Dict[Any, Any], of: str) -> Dict[Any, Any]:
        compared.append((dyn, sorted(asks), of))
        return {k: ReleaseDrift() for k in asks}
    monkeypatch.setattr(adapter, "assess_releases", releases)
    end = ended(adapter.run_site_plan, FakeModule(module, check_mode=True, services=SITE, from_charts=False))
    # In check mode, a plan with a flow to run (keystone's greenfield) is what the run would change.
    assert not end.failed and end.result["changed"] is True
    # The release of the one service at rest is read, with the same connection.
    assert compared == [("dyn", [("openstack", "mariadb")], "Secret")]
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


def test_a_drifted_release_is_planned_and_its_diff_masks_credentials(monkeypatch: pytest.MonkeyPatch,
                                                                     connections: List[Any]) -> None:
    at_rest = {"status": {"state": "Operational", "currentVersion": "10.6"}}
    monkeypatch.setattr(adapter, "read_records", lambda dyn, namespaces: {
        ("openstack", "mariadb"): dict(at_rest, metadata={"name": "mariadb", "namespace": "openstack"}),
        ("openstack", "keystone"): {"metadata": {"name": "keystone", "namespace": "openstack"},
                                    "status": {"state": "Operational", "currentVersion": "2026.1"}}})
    drifts = {("openstack", "mariadb"): ReleaseDrift(values=["password"], values_was={"password": "old-s3cr3t-pw"},
                                                     values_wanted={"password": "s3cr3t-root"}),
              ("openstack", "keystone"): ReleaseDrift(objects=[ObjectDrift(
                  "Secret", "keystone-etc", "openstack", ["data.keystone.conf"],
                  was={"data.keystone.conf": "c2VjcmV0"}, wanted={"data.keystone.conf": "b3RoZXI="})],
                  policy="correct")}
    monkeypatch.setattr(adapter, "assess_releases", lambda dyn, asks, of: {k: drifts[k] for k in asks})
    end = ended(adapter.run_site_plan, FakeModule(module, check_mode=True, diff=True, services=SITE, from_charts=False))
    assert not end.failed and end.result["changed"] is True
    flows = {s["service"]: (s["flow"], s["reason"]) for s in end.result["services"]}
    assert flows["mariadb"] == ("update", "values password changed; the release stays at version 10.6; "
                                          "drain: no rolling upgrade is known for mariadb")
    assert flows["keystone"][0] == "reconcile" and "Secret/keystone-etc data.keystone.conf" in flows["keystone"][1]
    shown = repr(end.result)
    assert "s3cr3t" not in shown and "c2VjcmV0" not in shown and "b3RoZXI=" not in shown
    assert [d["before_header"] for d in end.result["diff"]] == ["mariadb (deployed)", "keystone (deployed)"]
    assert "data.keystone.conf: '********'" in end.result["diff"][1]["after"]
