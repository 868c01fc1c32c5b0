"""plugins/module_utils/site/plan.py: the plan of a site, deploying and
removing, from its inventory and its ServiceLifecycle records."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import SiteError
from ansible_collections.lcm.openstack.plugins.module_utils.site.plan import site_plan
from support.paths import UNIT_FIXTURES

OPENSTACK_HELM = yaml.safe_load((UNIT_FIXTURES / "site" / "openstack_helm.yaml").read_text())
THIRTY = yaml.safe_load((UNIT_FIXTURES / "site" / "thirty.yaml").read_text())


def _slc(name: str, state: str, version: str, flow: str = "greenfield", flow_state: str = "Succeeded",
         namespace: str = "openstack") -> Dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace},
            "status": {"state": state, "currentVersion": version,
                       "flow": {"name": flow, "state": flow_state, "targetVersion": version}}}


# The bed after a 2025.1 site: the infrastructure and keystone deployed, placement never was.
DEPLOYED = {("openstack", r["metadata"]["name"]): r for r in (
    _slc("mariadb", "Operational", "10.6"), _slc("memcached", "Operational", "1.6"),
    _slc("rabbitmq", "Operational", "3.12"), _slc("keystone", "Operational", "2025.1"))}


def _plan(services: List[Dict[str, Any]], records: Any = None, action: str = "deploy", external: bool = False) -> Dict[str, Any]:
    asked: List[List[str]] = []

    def read(namespaces: List[str]) -> Any:
        asked.append(namespaces)
        return DEPLOYED if records is None else records
    result = site_plan(services, action, external, read)
    assert len(asked) == 1
    return result


def _by_name(result: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    return {s["service"]: s for s in result["services"]}


def test_the_openstack_helm_site_deployed_over_2025_1() -> None:
    result = _plan(OPENSTACK_HELM)
    assert result["levels"] == [["mariadb", "memcached", "rabbitmq"], ["keystone"], ["placement"]]
    assert [(s["service"], s["level"], s["flow"], s["reason"]) for s in result["services"]] == [
        ("mariadb", 0, "nothing", "Operational at 10.6"),
        ("memcached", 0, "nothing", "Operational at 1.6"),
        ("rabbitmq", 0, "update", "version 3.12 -> 3.13 (not an OpenStack release: path not checked); "
                                  "drain: no rolling upgrade is known for rabbitmq"),
        ("keystone", 1, "update", "version 2025.1 -> 2026.1 (SLURP -> SLURP); rolling: keystone supports rolling upgrades"),
        ("placement", 2, "greenfield", "no ServiceLifecycle yet"),
    ]
    # mariadb does nothing: the chain through rabbitmq (90 s) weighs more than through it
    assert result["critical_path"] == {"services": ["rabbitmq", "keystone", "placement"], "duration": 570}


def test_an_entry_carries_everything_a_flow_needs() -> None:
    keystone = _by_name(_plan(OPENSTACK_HELM))["keystone"]
    assert keystone == {
        "service": "keystone", "namespace": "openstack", "release": "keystone", "level": 1, "flow": "update",
        "reason": "version 2025.1 -> 2026.1 (SLURP -> SLURP); rolling: keystone supports rolling upgrades",
        "strategy": "rolling", "current_version": "2025.1", "target_version": "2026.1",
        "state": "Operational",
        "release_path": {"checked": True, "supported": True,
                         "reason": "2025.1 -> 2026.1 is a supported upgrade (SLURP -> SLURP)"},
        "depends_on": [{"service": "mariadb", "namespace": "openstack", "min_version": "10.6", "external": False,
                        "derived": False, "reasons": []},
                       {"service": "memcached", "namespace": "openstack", "min_version": "", "external": False,
                        "derived": False, "reasons": []},
                       {"service": "rabbitmq", "namespace": "openstack", "min_version": "", "external": False,
                        "derived": False, "reasons": []}],
        # rabbitmq is updated in this run: keystone's flow waits for its update to end at 3.13
        "wait_for": ["mariadb>=10.6", "memcached", "rabbitmq"], "wait_at": {"rabbitmq": "3.13"},
        "together_with": [], "provided": [],
        "dependents": ["placement"], "expected_duration": 300, "removed_with": [],
        "drift": None}
    placement = _by_name(_plan(OPENSTACK_HELM))["placement"]
    assert (placement["state"], placement["current_version"], placement["dependents"]) == ("", "", [])


def test_the_summary_is_one_table_in_plan_order() -> None:
    assert _plan(OPENSTACK_HELM)["summary"].splitlines() == [
        "site plan (deploy): 5 service(s) in 3 level(s); greenfield 1, update 2, nothing 2; "
        "critical path rabbitmq -> keystone -> placement (9m30s)",
        "LEVEL  SERVICE    FLOW        VERSION           AFTER                                   BESIDE  REASON",
        "0      mariadb    nothing     10.6              -                                       -       Operational at 10.6",
        "0      memcached  nothing     1.6               -                                       -       Operational at 1.6",
        "0      rabbitmq   update      3.12 -> 3.13      -                                       -       "
        "version 3.12 -> 3.13 (not an OpenStack release: path not checked); drain: no rolling upgrade is known for rabbitmq",
        "1      keystone   update      2025.1 -> 2026.1  mariadb>=10.6,memcached,rabbitmq>=3.13  -       "
        "version 2025.1 -> 2026.1 (SLURP -> SLURP); rolling: keystone supports rolling upgrades",
        "2      placement  greenfield  2026.1            keystone>=2026.1,mariadb,memcached      -       no ServiceLifecycle yet",
    ]


def test_a_strategy_the_service_cannot_run_is_refused_before_anything() -> None:
    services = [dict(s, update_strategy="rolling") if s["service"] == "rabbitmq" else s for s in OPENSTACK_HELM]
    with pytest.raises(SiteError, match="site plan refused, nothing changed: rabbitmq \\(openstack\\): update of "
                                        "rabbitmq refused, nothing changed: update_strategy rolling, but no rolling "
                                        "upgrade is known for rabbitmq"):
        _plan(services)
    drained = _by_name(_plan([dict(s, update_strategy="drain") for s in OPENSTACK_HELM]))["keystone"]
    assert drained["strategy"] == "drain" and drained["reason"].endswith("; drain: update_strategy drain asked")


def test_a_site_at_rest_has_nothing_to_do() -> None:
    records = {("openstack", s["service"]): _slc(s["service"], "Operational", s["version"]) for s in OPENSTACK_HELM}
    result = _plan(OPENSTACK_HELM, records)
    assert {s["flow"] for s in result["services"]} == {"nothing"}
    assert result["critical_path"] == {"services": [], "duration": 0}
    assert result["summary"].splitlines()[0] == "site plan (deploy): 5 service(s) in 3 level(s); nothing 5; nothing to do"


def test_without_any_record_every_service_is_greenfield() -> None:
    result = _plan(OPENSTACK_HELM, {})
    assert {s["flow"] for s in result["services"]} == {"greenfield"}
    assert result["critical_path"] == {"services": ["mariadb", "keystone", "placement"], "duration": 600}


def test_removal_goes_dependents_first() -> None:
    result = _plan(OPENSTACK_HELM, action="remove")
    assert result["levels"] == [["placement"], ["keystone"], ["mariadb", "memcached", "rabbitmq"]]
    assert [(s["service"], s["level"], s["flow"]) for s in result["services"]] == [
        ("placement", 2, "nothing"), ("keystone", 1, "remove"), ("mariadb", 0, "remove"),
        ("memcached", 0, "remove"), ("rabbitmq", 0, "remove")]
    # in the order the removals run: keystone, then what it stood on
    assert result["critical_path"] == {"services": ["keystone", "mariadb"], "duration": 420}
    assert result["summary"].splitlines()[2].split() == [
        "2", "placement", "nothing", "-", "-", "-", "no", "ServiceLifecycle:", "nothing", "to", "remove"]
    # a removal waits for its dependents: keystone's is placement
    assert _by_name(result)["keystone"]["dependents"] == ["placement"]


def test_thirty_services_greenfield() -> None:
    result = _plan(THIRTY, {})
    assert [len(level) for level in result["levels"]] == [7, 3, 9, 6, 5]
    assert {s["service"]: s["level"] for s in result["services"]} == {s["service"]: s["level"] for s in THIRTY}
    assert result["critical_path"] == {"services": ["ceph-mon", "ceph-osd", "glance", "nova", "octavia"], "duration": 1640}
    assert _by_name(result)["keystone"]["dependents"] == [
        "barbican", "cinder", "designate", "glance", "gnocchi", "heat", "horizon", "masakari", "nova", "placement"]


def test_services_with_nothing_to_do_weigh_nothing_on_the_critical_path() -> None:
    records = {("openstack", n): _slc(n, "Operational", "18.2") for n in ("ceph-mon", "ceph-osd", "ceph-client")}
    result = _plan(THIRTY, records)
    assert result["critical_path"] == {"services": ["mariadb", "keystone", "glance", "nova", "octavia"], "duration": 1260}


def test_external_dependencies_are_reported_and_order_nothing() -> None:
    services = [{"service": "keystone", "version": "2026.1", "depends_on": ["infra/mariadb>=10.6"]},
                {"service": "placement", "version": "2026.1", "depends_on": ["keystone"]}]
    result = _plan(services, {}, external=True)
    assert result["levels"] == [["keystone"], ["placement"]]
    assert _by_name(result)["keystone"]["depends_on"] == [
        {"service": "mariadb", "namespace": "infra", "min_version": "10.6", "external": True, "derived": False,
         "reasons": []}]
    assert _by_name(result)["keystone"]["wait_for"] == ["infra/mariadb>=10.6"]


def test_services_of_one_name_in_two_namespaces_are_told_apart() -> None:
    services = [{"service": "keystone", "namespace": "a", "version": "1"},
                {"service": "keystone", "namespace": "b", "version": "1", "depends_on": ["a/keystone"]}]
    result = _plan(services, {})
    assert result["levels"] == [["a/keystone"], ["b/keystone"]]
    assert [(s["service"], s["namespace"]) for s in result["services"]] == [("a/keystone", "a"), ("b/keystone", "b")]
    assert _by_name(result)["a/keystone"]["dependents"] == ["b/keystone"]


def test_the_namespaces_read_are_the_sites() -> None:
    asked: List[List[str]] = []
    services = [{"service": "keystone", "namespace": "b", "version": "1"},
                {"service": "mariadb", "namespace": "a", "version": "1"},
                {"service": "placement", "namespace": "b", "version": "1", "depends_on": ["keystone", "c/nova"]}]
    site_plan(services, "deploy", True, lambda namespaces: asked.append(namespaces) or {})
    assert asked == [["a", "b"]]  # c holds only an external dependency: not read


def test_a_broken_inventory_reads_nothing() -> None:
    def read(namespaces: List[str]) -> Any:
        raise AssertionError("read before the inventory was checked")
    with pytest.raises(SiteError, match="cycle, a -> b -> a"):
        site_plan([{"service": "a", "version": "1", "depends_on": ["b"]},
                   {"service": "b", "version": "1", "depends_on": ["a"]}], "deploy", False, read)


def test_an_empty_site_reads_nothing_and_plans_nothing() -> None:
    def read(namespaces: List[str]) -> Any:
        raise AssertionError("nothing to read")
    result = site_plan([], "deploy", False, read)
    assert (result["services"], result["levels"], result["critical_path"]) == ([], [], {"services": [], "duration": 0})
    assert result["summary"] == "site plan (deploy): 0 service(s) in 0 level(s); nothing to do"


def test_an_unsupported_jump_is_refused_before_any_release_is_read_naming_every_one() -> None:
    records = {("openstack", "keystone"): {"status": {"state": "Operational", "currentVersion": "2024.2"}},
               ("openstack", "placement"): {"status": {"state": "Operational", "currentVersion": "2026.2"}},
               ("openstack", "rabbitmq"): {"status": {"state": "Operational", "currentVersion": "3.9"}}}
    with pytest.raises(SiteError) as refused:
        _plan(OPENSTACK_HELM, records)
    message = str(refused.value)
    assert "keystone (openstack): 2024.2 -> 2026.1 is not a supported upgrade" in message
    assert "pass through 2025.1 first" in message
    assert "placement (openstack): 2026.2 -> 2026.1 moves back" in message
    assert "rabbitmq" not in message  # 3.9 -> 3.13 is no OpenStack release: not checked


def test_a_service_deployed_anew_or_left_alone_has_no_release_path() -> None:
    entries = _by_name(_plan(OPENSTACK_HELM))
    assert entries["placement"]["flow"] == "greenfield" and entries["placement"]["release_path"] is None


def test_a_dependent_waits_for_what_the_run_brings_its_dependencies_to() -> None:
    """An update or a greenfield of a dependency in this run is waited for at
    its target version, above the minimum written; a dependency left alone is
    waited for as written."""
    services = [{"service": "keystone", "version": "2026.1"},
                {"service": "placement", "version": "2026.1", "depends_on": ["keystone>=2025.1", "memcached"]},
                {"service": "memcached", "version": "1.6"}]
    records = {("openstack", "keystone"): _slc("keystone", "Operational", "2025.2"),
               ("openstack", "memcached"): _slc("memcached", "Operational", "1.6")}
    entries = _by_name(_plan(services, records))
    # What it declares is what its record keeps; the run's versions are for this run's wait alone.
    assert entries["placement"]["wait_for"] == ["keystone>=2025.1", "memcached"]
    assert entries["placement"]["wait_at"] == {"keystone": "2026.1"}
    records[("openstack", "keystone")] = _slc("keystone", "Operational", "2026.1")
    assert _by_name(_plan(services, records))["placement"]["wait_at"] == {}


def test_an_unsupported_jump_is_refused_before_any_chart_is_rendered() -> None:
    records = {("openstack", "keystone"): _slc("keystone", "Operational", "2025.1")}
    services = [{"service": "keystone", "version": "2026.2"}]

    def derive(site: Any) -> Any:
        raise AssertionError("the charts were rendered for a refused plan")
    with pytest.raises(SiteError, match=r"2025.1 -> 2026.2 is not a supported upgrade.*pass through 2026.1 first"):
        site_plan(services, "deploy", False, lambda namespaces: records, derive)


def test_a_removal_waits_for_the_dependents_the_run_removes_too() -> None:
    """--limit leaves placement out: keystone's removal does not wait for it
    (its start refuses while placement depends on it); a slice waits for every dependent."""
    services = [{"service": "keystone", "version": "2026.1"},
                {"service": "placement", "version": "2026.1", "depends_on": ["keystone"]},
                {"service": "barbican", "version": "2026.1", "depends_on": ["keystone"]}]
    records = {("openstack", n): _slc(n, "Operational", "2026.1") for n in ("keystone", "placement", "barbican")}

    def removed(in_run: Any = None, external: bool = False) -> Dict[str, List[str]]:
        result = site_plan(services, "remove", external, lambda namespaces: records, None, in_run)
        return {s["service"]: s["removed_with"] for s in result["services"]}
    assert removed() == {"keystone": ["barbican", "placement"], "placement": [], "barbican": []}
    assert removed(["keystone", "barbican"])["keystone"] == ["barbican"]
    assert removed(external=True)["keystone"] == ["*"]
    assert _by_name(_plan(services, records))["keystone"]["removed_with"] == []  # a deploy removes nothing
