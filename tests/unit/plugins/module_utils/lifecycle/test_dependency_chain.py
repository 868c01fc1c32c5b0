"""plugins/module_utils/lifecycle/dependency_chain.py: a lost dependency
followed to the service whose own flow failed, and the start's failure said
once. A site's records in fixtures/dependency_chain/site.yaml; each service's
start is the real one (dependency_wait.settle), its failure written on its
record as the flow's start writes it."""

from __future__ import annotations

import copy
from typing import Any, Dict, List, Optional

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError, LcmError
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import parse_time
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import dependency_wait
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.dependencies import (
    judge, parse, parse_all, without_advice,
)
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.dependency_chain import Root, follow, lost_message
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.record import set_condition
from support.fake_api import Answer, status_error
from support.paths import UNIT_FIXTURES

SITE = yaml.safe_load((UNIT_FIXTURES / "dependency_chain" / "site.yaml").read_text())
SINCE = parse_time(SITE["since"])
GAVE_UP_AT = "2026-02-01T00:10:00Z"  # after keystone's flow ended, within the run


class _Site:
    """The ServiceLifecycles, read by GET as the flow's start reads them."""

    kind, name = "ServiceLifecycle", "servicelifecycles"

    def __init__(self, records: List[Dict[str, Any]]) -> None:
        self.records = {(r["metadata"]["namespace"], r["metadata"]["name"]): copy.deepcopy(r) for r in records}
        self.gets: List[str] = []

    def get(self, name: str, namespace: str, **_kw: Any) -> Answer:
        self.gets.append(name)
        if (namespace, name) not in self.records:
            raise status_error(404, "NotFound", f"servicelifecycles {name} not found")
        return Answer(self.records[(namespace, name)])

    def record(self, name: str) -> Dict[str, Any]:
        return self.records[("openstack", name)]

    def start(self, service: str) -> str:
        """The service's flow start: its failure, written on its record as DependencyLost."""
        record = self.record(service)
        deps = parse_all(record["spec"].get("dependsOn"), "openstack", service)
        with pytest.raises(LcmError) as err:
            dependency_wait.settle(None, self, service, deps, 600, SINCE, lambda *_: None, check_mode=True)
        set_condition(record.setdefault("status", {}), "DependenciesReady", False, "DependencyLost",
                      str(err.value), GAVE_UP_AT)
        return str(err.value)


def _site(case: Dict[str, Any]) -> _Site:
    site = _Site(SITE["records"])
    for name, depends_on in (case.get("depends_on") or {}).items():
        site.record(name)["spec"]["dependsOn"] = depends_on
    for name, condition in (case.get("conditions") or {}).items():
        site.record(name)["status"]["conditions"] = [dict(condition, type="DependenciesReady", status="False")]
    return site


def _one_line(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("case", SITE["cases"], ids=[c["case"] for c in SITE["cases"]])
def test_a_failed_start_names_the_chain_once_and_quotes_the_root_cause_once(case: Dict[str, Any]) -> None:
    site = _site(case)
    failure = ""
    for service in case["starts"]:
        failure = site.start(service)
    if case.get("running_again"):
        site.record(case["running_again"])["status"]["flow"].update(state="Running", completedAt=None)
        for service in case["then"]:
            failure = site.start(service)
    assert failure == _one_line(case["failure"])
    assert failure.count(_one_line(case.get("root_cause") or SITE["root_cause"])) == 1
    assert failure.count("waiting would not help") == 1
    assert failure.count("require_dependencies=false") == 1
    assert "Failed or Removed" not in failure  # the earlier nested wording is not carried up


def test_the_records_below_are_read_only_once_a_start_has_failed() -> None:
    site = _site({})
    site.start("neutron")
    site.gets.clear()
    site.start("nova")
    assert site.gets == ["neutron", "keystone", "mariadb"]  # nova's one dependency, then neutron's
    site.gets.clear()
    site.record("keystone")["status"] = {"state": "Operational"}
    site.record("neutron")["status"] = {"state": "Operational"}
    dependency_wait.settle(None, site, "nova", parse_all(["neutron"], "openstack", "nova"), 600, SINCE,
                           lambda *_: None, check_mode=True)
    assert site.gets == ["neutron"]  # met: nothing more read


def test_a_record_below_that_cannot_be_read_ends_the_chain_at_the_one_that_gave_up() -> None:
    site = _site({})
    site.start("neutron")
    del site.records[("openstack", "keystone")]
    neutron = site.record("neutron")
    roots = follow(parse("neutron", "openstack"), neutron, SINCE, lambda ns, name: site.records.get((ns, name)))
    assert [r.path for r in roots] == [("neutron",)]
    assert roots[0].said.startswith("did not start its flow (neutron waits for keystone, which is Removed")

    def denied(_ns: str, _name: str) -> Optional[Dict[str, Any]]:
        raise KubeError("could not get servicelifecycles: HTTP 403")
    assert [r.path for r in follow(parse("neutron", "openstack"), neutron, SINCE, denied)] == [("neutron",)]


def test_a_cycle_in_the_records_ends_where_it_closes() -> None:
    site = _site({})
    site.start("neutron")
    site.record("keystone")["spec"]["dependsOn"] = ["neutron"]
    set_condition(site.record("keystone")["status"], "DependenciesReady", False, "DependencyLost",
                  "keystone waits for neutron, which did not start its flow", GAVE_UP_AT)
    roots = follow(parse("neutron", "openstack"), site.record("neutron"), SINCE,
                   lambda ns, name: site.records.get((ns, name)))
    assert [r.path for r in roots] == [("neutron", "keystone")]  # keystone's neutron is not followed again


def test_a_chain_into_another_namespace_names_it_there() -> None:
    keystone = {"metadata": {"name": "keystone", "namespace": "identity"},
                "status": {"state": "Failed", "flow": {"name": "update", "state": "Failed",
                                                       "completedAt": "2026-02-01T00:05:00Z", "message": "db-sync"}}}
    neutron = {"metadata": {"name": "neutron", "namespace": "openstack"},
               "spec": {"dependsOn": ["identity/keystone"]}, "status": {}}
    set_condition(neutron["status"], "DependenciesReady", False, "DependencyLost", "lost", GAVE_UP_AT)
    dep = parse("neutron", "openstack")
    assert judge(dep, neutron, SINCE).lost
    roots = follow(dep, neutron, SINCE, lambda ns, name: keystone if (ns, name) == ("identity", "keystone") else None)
    assert roots == [Root(("neutron", "identity/keystone"), "is Failed (its update flow failed: db-sync)")]


def test_several_roots_are_each_said_once_with_one_advice_naming_their_flows() -> None:
    text = lost_message("nova", [Root(("neutron", "keystone"), "is Removed (x)"), Root(("placement",), "is Failed"),
                                 Root(("cinder", "keystone"), "is Removed (x)")])
    assert text == ("nova waits for keystone (through neutron and cinder), which is Removed (x); and for placement, "
                    "which is Failed. No flow runs to bring them back, so waiting would not help: run the flows of "
                    "keystone and placement first, or set require_dependencies=false")
    assert lost_message("nova", [Root(("keystone",), "is Failed"), Root(("neutron", "keystone"), "is Failed")]) == (
        "nova waits for keystone (directly and through neutron), which is Failed. No flow runs to bring keystone "
        "back, so waiting would not help: run keystone's flow first, or set require_dependencies=false")


@pytest.mark.parametrize("message, quoted", [
    ("a waits for b, which is Failed (x. y). No flow runs to bring it back, so waiting would not help: run its "
     "flow first, or set require_dependencies=false", "a waits for b, which is Failed (x. y)"),
    ("a waited 5 s of dependency_timeout 5 for its dependencies; not met: b (Installing). Run their flows first, "
     "raise dependency_timeout, or set require_dependencies=false",
     "a waited 5 s of dependency_timeout 5 for its dependencies; not met: b (Installing)"),
    ("a depends on b (Removed: gone): Failed or Removed, with no flow running to bring it back, so waiting would "
     "not help. Run its flow first, or set require_dependencies=false", "a depends on b (Removed: gone)"),
    ("keystone depends on mariadb, which is Failed", "keystone depends on mariadb, which is Failed"),
])
def test_a_failure_is_quoted_without_its_advice(message: str, quoted: str) -> None:
    assert without_advice(message) == quoted
