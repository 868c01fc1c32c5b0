"""plugins/module_utils/site/plan.py with the releases read: a service at
rest whose release differs from what is asked is updated at its version, one
whose objects drifted is reconciled or reported, as its policy says."""

from __future__ import annotations

from typing import Any, Dict, List

import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.drift.model import CORRECT, REPORT, ObjectDrift, ReleaseDrift
from ansible_collections.lcm.openstack.plugins.module_utils.site.model import parse_site
from ansible_collections.lcm.openstack.plugins.module_utils.site.plan import plan, site_plan
from support.paths import UNIT_FIXTURES

OPENSTACK_HELM = yaml.safe_load((UNIT_FIXTURES / "site" / "openstack_helm.yaml").read_text())
MARIADB, MEMCACHED, KEYSTONE = ("openstack", "mariadb"), ("openstack", "memcached"), ("openstack", "keystone")


def _slc(name: str, version: str) -> Dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "openstack"},
            "status": {"state": "Operational", "currentVersion": version,
                       "flow": {"name": "greenfield", "state": "Succeeded", "targetVersion": version}}}


# Every service Operational at the version asked, but keystone, at 2025.1 where 2026.1 is asked.
RECORDS = {("openstack", s["service"]): _slc(s["service"], "2025.1" if s["service"] == "keystone" else s["version"])
           for s in OPENSTACK_HELM}
AT_REST = {k: _slc(k[1], next(s["version"] for s in OPENSTACK_HELM if s["service"] == k[1])) for k in RECORDS}
VALUES = ReleaseDrift(values=["conf.max_connections"], values_was={"conf.max_connections": 100},
                      values_wanted={"conf.max_connections": 500})
REPLICAS = ObjectDrift("StatefulSet", "memcached", "openstack", ["spec.replicas"])


def _site_plan(drifts: Dict[Any, ReleaseDrift], records: Any = None, action: str = "deploy") -> Any:
    asked: List[Any] = []

    def read_drift(site: Any, keys: List[Any]) -> Dict[Any, ReleaseDrift]:
        asked.append(list(keys))
        return {k: drifts[k] for k in keys if k in drifts}
    result = site_plan(OPENSTACK_HELM, action, False, lambda namespaces: RECORDS if records is None else records,
                       read_drift=read_drift)
    return result, asked


def _by_name(result: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    return {s["service"]: s for s in result["services"]}


def test_only_the_services_at_rest_are_read() -> None:
    _result, asked = _site_plan({})
    # keystone is updated by its record: its release is not read.
    assert [sorted(keys) for keys in asked] == [[MARIADB, MEMCACHED, ("openstack", "placement"),
                                                 ("openstack", "rabbitmq")]]


def test_a_removal_reads_no_release() -> None:
    result, asked = _site_plan({MARIADB: VALUES}, action="remove")
    assert asked == [] and [s["drift"] for s in result["services"]] == [None] * 5


def test_no_service_at_rest_reads_no_release() -> None:
    _result, asked = _site_plan({}, records={})
    assert asked == []


def test_values_changed_at_the_same_version_plan_an_update_without_a_release_path() -> None:
    mariadb = _by_name(_site_plan({MARIADB: VALUES})[0])["mariadb"]
    assert mariadb["flow"] == "update"
    assert mariadb["reason"].startswith("values conf.max_connections changed; the release stays at version 10.6; ")
    assert mariadb["release_path"] is None and "path not checked" not in mariadb["reason"]
    assert mariadb["strategy"]  # the update flow runs it: a strategy is chosen
    assert (mariadb["current_version"], mariadb["target_version"]) == ("10.6", "10.6")
    assert mariadb["drift"] == VALUES.as_dict() and "500" not in repr(mariadb["drift"])


def test_live_drift_with_correct_plans_a_reconcile_with_a_strategy() -> None:
    drift = ReleaseDrift(objects=[REPLICAS], policy=CORRECT)
    memcached = _by_name(_site_plan({MEMCACHED: drift})[0])["memcached"]
    assert memcached["flow"] == "reconcile" and memcached["release_path"] is None
    assert memcached["strategy"] == "drain"
    assert memcached["reason"] == ("drift: StatefulSet/memcached spec.replicas; drift: correct applies the release "
                                   "again at 1.6; drain: no rolling upgrade is known for memcached")
    assert memcached["drift"]["objects"] == [REPLICAS.as_dict()] and memcached["drift"]["policy"] == CORRECT


def test_live_drift_reported_stays_nothing_naming_the_drift() -> None:
    result, _asked = _site_plan({MEMCACHED: ReleaseDrift(objects=[REPLICAS], policy=REPORT)}, records=AT_REST)
    memcached = _by_name(result)["memcached"]
    assert (memcached["flow"], memcached["strategy"]) == ("nothing", "")
    assert memcached["reason"] == ("Operational at 1.6; drift: StatefulSet/memcached spec.replicas (reported; "
                                   "drift: correct applies the release again)")
    assert result["summary"].splitlines()[0].endswith("; nothing 5; nothing to do")
    assert result["critical_path"] == {"services": [], "duration": 0}


def test_the_summary_counts_a_reconcile_and_it_weighs_on_the_critical_path() -> None:
    result, _asked = _site_plan({MEMCACHED: ReleaseDrift(objects=[REPLICAS], policy=CORRECT)}, records=AT_REST)
    head = result["summary"].splitlines()[0]
    assert head.startswith("site plan (deploy): 5 service(s) in 3 level(s); reconcile 1, nothing 4; critical path ")
    assert "nothing to do" not in head
    memcached = next(line for line in result["summary"].splitlines()[1:] if " memcached " in line)
    assert " reconcile " in memcached and " 1.6 " in memcached
    assert result["critical_path"]["services"] == ["memcached"]
    assert result["critical_path"]["duration"] == _by_name(result)["memcached"]["expected_duration"]


def test_a_reconcile_keeps_its_version_so_no_dependent_waits_for_one() -> None:
    # memcached serves on at 1.6 while its release is applied again: keystone does not wait for the reconcile.
    result, _asked = _site_plan({MEMCACHED: ReleaseDrift(objects=[REPLICAS], policy=CORRECT),
                                 KEYSTONE: VALUES}, records=AT_REST)
    keystone = _by_name(result)["keystone"]
    assert _by_name(result)["memcached"]["flow"] == "reconcile"
    assert keystone["flow"] == "update" and keystone["wait_at"] == {} and "memcached" in keystone["wait_for"]


def test_a_service_the_records_already_move_keeps_its_decision() -> None:
    site = parse_site(OPENSTACK_HELM, "deploy", False)
    drifts = {KEYSTONE: VALUES, MEMCACHED: ReleaseDrift(objects=[REPLICAS], policy=CORRECT)}
    keystone = _by_name(plan(site, RECORDS, None, drifts))["keystone"]
    assert keystone["flow"] == "update" and keystone["reason"].startswith("version 2025.1 -> 2026.1 (SLURP -> SLURP)")
    assert keystone["release_path"] is not None and keystone["release_path"]["supported"] is True


def test_a_release_not_compared_is_said_in_the_reason() -> None:
    result, _asked = _site_plan({MARIADB: ReleaseDrift(unread="no deployed revision")}, records=AT_REST)
    mariadb = _by_name(result)["mariadb"]
    assert mariadb["flow"] == "nothing"
    assert mariadb["reason"] == "Operational at 10.6; its release was not compared: no deployed revision"
    assert mariadb["drift"]["unread"] == "no deployed revision"


def test_without_drift_read_an_entry_says_none() -> None:
    site = parse_site(OPENSTACK_HELM, "deploy", False)
    entries: List[Dict[str, Any]] = plan(site, AT_REST)["services"]
    assert [e["drift"] for e in entries] == [None] * 5
    assert {e["flow"] for e in entries} == {"nothing"}
