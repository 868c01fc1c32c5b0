"""plugins/module_utils/updatestatus/site.py: the site of each service and the sites' progress.

The scenarios are fixtures/update_status/site_*.yaml. In site_mid_run the run
started 05:10:00; mariadb and rabbitmq ended in it, memcached keeps
yesterday's run; keystone (60s expected) works since its dependencies were
ready at 05:11:00, the latest time the records show; placement (30s) waits
for it: 05:11:00 + 60 + 30 = 05:12:30.
"""

from __future__ import annotations

import copy
import random
from datetime import datetime, timedelta
from typing import Any, Dict, List

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import parse_time
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.site import (
    is_done, member, site_view, sites, waiting_for,
)
from support.update_status import load

SITE = "lifecycle.openstack.org/site"
EXPECTED = "lifecycle.openstack.org/site-expected-seconds"
RUN = "lifecycle.openstack.org/site-run"


def _records(name: str = "site_mid_run") -> List[Dict[str, Any]]:
    return [o for o in load(name)["objects"] if o["kind"] == "ServiceLifecycle"]


def _now(name: str = "site_mid_run") -> datetime:
    return parse_time(load(name)["now"])


def _record(records: List[Dict[str, Any]], name: str) -> Dict[str, Any]:
    (found,) = [r for r in records if r["metadata"]["name"] == name]
    return found


def _site(records: List[Dict[str, Any]], now: datetime) -> Dict[str, Any]:
    (found,) = site_view(records, now)[1]
    return found


def _at(text: str) -> datetime:
    return parse_time(f"2026-11-26T{text}Z")


# -- the site of a service ------------------------------------------------------
def test_each_member_gets_its_site_level_and_what_it_waits_for() -> None:
    site_of, _sites = site_view(_records(), _now())
    assert site_of[("openstack", "placement")] == {"name": "example", "level": 2, "waitingFor": "keystone (Installing)"}
    assert site_of[("openstack", "keystone")] == {"name": "example", "level": 1}
    assert ("openstack", "glance") not in site_of  # no site label


def test_the_wait_is_the_condition_message_while_it_is_false() -> None:
    record = {"status": {"conditions": [{"type": "DependenciesReady", "status": "False", "reason": "Waiting",
                                         "message": "waiting for keystone (Installing), mariadb (no ServiceLifecycle "
                                                    "in openstack)"}]}}
    assert waiting_for(record) == "keystone (Installing), mariadb (no ServiceLifecycle in openstack)"
    record["status"]["conditions"][0]["status"] = "True"
    assert waiting_for(record) == ""
    record["status"]["conditions"][0].update(status="False", reason="DependencyLost")
    assert waiting_for(record) == ""  # the flow ended: nothing is waited for
    assert waiting_for({"status": {}}) == ""


def test_dependencies_are_read_with_or_without_namespace_and_minimum() -> None:
    keystone = member(_record(_records(), "keystone"))
    assert keystone is not None
    assert keystone.depends == (("openstack", "mariadb"), ("openstack", "rabbitmq"), ("openstack", "memcached"))
    assert member(_record(_records(), "placement")).depends == (("openstack", "keystone"),)
    assert member(_record(_records(), "glance")) is None


# -- a site mid-run, finished, failed ---------------------------------------------
def test_a_site_mid_run() -> None:
    assert _site(_records(), _now()) == {
        "name": "example", "services": 5, "levels": 3, "done": 3, "completion": 60,
        "runStartedAt": "2026-11-26T05:10:00Z",
        "waiting": [{"service": "placement", "namespace": "openstack", "for": "keystone (Installing)"}],
        "failed": [], "estimatedCompletionAt": "2026-11-26T05:12:30Z"}


def test_a_finished_run_is_complete_without_an_estimate() -> None:
    site = _site(_records("site_finished"), _now("site_finished"))
    assert (site["done"], site["completion"], site["waiting"], site["failed"]) == (5, 100, [], [])
    assert "estimatedCompletionAt" not in site


def test_a_failed_member_and_the_one_it_failed_are_named() -> None:
    site = _site(_records("site_failed"), _now("site_failed"))
    assert (site["done"], site["failed"], site["waiting"]) == (3, ["keystone", "placement"], [])
    # Not done: their flows again, from the last time the records show (05:11:51).
    assert site["estimatedCompletionAt"] == "2026-11-26T05:13:21Z"


def test_a_member_of_an_older_run_at_rest_is_done() -> None:
    records = _records()
    run = member(_record(records, "mariadb")).run
    assert is_done(member(_record(records, "memcached")), run)  # its flow ended yesterday, by yesterday's run
    # Touched by this run but its flow ended before the run started: this run's work is not done yet.
    rabbitmq = _record(records, "rabbitmq")
    rabbitmq["status"]["flow"]["completedAt"] = "2026-11-26T05:09:00Z"
    assert not is_done(member(rabbitmq), run)
    assert _site(records, _now())["done"] == 2


def test_a_failed_flow_of_an_older_run_is_not_this_runs_failure() -> None:
    records = _records()
    memcached = _record(records, "memcached")
    memcached["status"]["flow"]["state"] = "Failed"
    assert _site(records, _now())["failed"] == []
    memcached["status"]["state"] = "Failed"  # the service itself Failed is, whatever the run
    assert _site(records, _now())["failed"] == ["memcached"]


def test_removed_is_done_too() -> None:
    records = _records()
    rabbitmq = _record(records, "rabbitmq")
    rabbitmq["status"].update(state="Removed", flow=dict(rabbitmq["status"]["flow"], name="remove"))
    assert _site(records, _now())["done"] == 3


# -- the estimate --------------------------------------------------------------------
def _expect(records: List[Dict[str, Any]], name: str, seconds: int) -> None:
    _record(records, name)["metadata"]["annotations"][EXPECTED] = str(seconds)


def test_the_estimate_follows_the_longest_chain_from_the_running_flows_start() -> None:
    records = _records()
    _expect(records, "keystone", 100)
    assert _site(records, _now())["estimatedCompletionAt"] == "2026-11-26T05:13:10Z"  # 05:11:00 + 100 + 30
    # placement on its own, not started: the longer of keystone's 100s and its 200s.
    _record(records, "placement")["spec"]["dependsOn"] = []
    _expect(records, "placement", 200)
    assert _site(records, _now())["estimatedCompletionAt"] == "2026-11-26T05:14:20Z"


def test_a_running_member_past_its_expected_end_leaves_nothing() -> None:
    records = _records()
    _expect(records, "keystone", 10)  # expected at 05:11:10
    horizon = copy.deepcopy(_record(records, "rabbitmq"))  # ended later, at 05:11:15
    horizon["metadata"]["name"] = "horizon"
    horizon["status"]["flow"]["completedAt"] = "2026-11-26T05:11:15Z"
    assert _site(records + [horizon], _now())["estimatedCompletionAt"] == "2026-11-26T05:11:45Z"  # + 0 + 30


def test_the_wait_before_the_work_is_not_counted_as_work() -> None:
    """keystone's flow started at 05:10:00 with the run; its work at 05:11:00."""
    records = _records()
    _record(records, "keystone")["status"]["conditions"] = []  # no condition: the flow's start
    assert _site(records, _now())["estimatedCompletionAt"] == "2026-11-26T05:11:30Z"  # 05:10:00 + 60 = 05:11:00, + 30


def test_the_estimate_does_not_move_while_the_records_do_not() -> None:
    records = _records()
    first = sites([m for m in map(member, records) if m], _now())
    for later in (timedelta(seconds=1), timedelta(seconds=30), timedelta(minutes=10)):
        assert sites([m for m in map(member, records) if m], _now() + later) == first


def test_without_any_time_in_the_records_now_counts_to_the_minute() -> None:
    record = {"metadata": {"name": "nova", "namespace": "openstack", "labels": {SITE: "lone"},
                           "annotations": {EXPECTED: "90"}}, "status": {"state": "Planning"}}
    site = _site([record], _at("05:11:20"))
    assert site["estimatedCompletionAt"] == "2026-11-26T05:12:30Z"  # 05:11:00 + 90
    assert _site([record], _at("05:11:59")) == site
    assert "runStartedAt" not in site and site["levels"] == 0


def test_a_cycle_among_the_records_gives_no_estimate() -> None:
    records = _records()
    _record(records, "keystone")["spec"]["dependsOn"].append("placement")
    site = _site(records, _now())
    assert "estimatedCompletionAt" not in site and site["completion"] == 60


# -- many sites, same names -------------------------------------------------------------
def test_sites_are_sorted_and_a_name_in_two_namespaces_says_which() -> None:
    records = _records()
    other = copy.deepcopy(_record(records, "placement"))
    other["metadata"]["namespace"] = "region-two"
    solo = copy.deepcopy(_record(records, "rabbitmq"))
    solo["metadata"]["labels"][SITE] = "aaa"
    solo["metadata"]["annotations"][RUN] = "2026-11-26T04:00:00Z"
    found = site_view(records + [other, solo], _now())[1]
    assert [s["name"] for s in found] == ["aaa", "example"]
    assert [w["service"] for w in found[1]["waiting"]] == ["openstack/placement", "region-two/placement"]


def test_the_same_records_in_any_order_give_the_same_sites() -> None:
    records = _records()
    shuffled = copy.deepcopy(records)
    random.Random(3).shuffle(shuffled)
    assert site_view(shuffled, _now()) == site_view(records, _now())
    assert site_view(records, _now()) == site_view(records, _now())


@pytest.mark.parametrize("value", ["x", "", "-5"])
def test_an_unreadable_expected_duration_counts_as_none(value: str) -> None:
    records = _records()
    _record(records, "placement")["metadata"]["annotations"][EXPECTED] = value
    assert _site(records, _now())["estimatedCompletionAt"] == "2026-11-26T05:12:00Z"  # keystone's end
