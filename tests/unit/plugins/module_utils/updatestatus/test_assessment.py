"""plugins/module_utils/updatestatus/assessment.py: each service's entry and the whole status.

The numbers of upgrade_progressing.yaml: the flow started 05:08:00 and plans
trafficdrain, upgrade, test, trafficrollout. Earlier flows' Succeeded phases
took 2s (drain; this flow's took 3s), 40s and 60s (upgrade: median 50s), 20s
(test), 5s (rollout); times 1.2 that is 2.4 + 60 + 24 + 6 = 92.4s, so the
deadline is 05:09:32.4. At 05:08:45 the upgrade has run 40s of its 60s.
"""

from __future__ import annotations

import copy
import json
import random
from datetime import datetime, timedelta
from typing import Any, Dict, List, Optional

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.assessment import (
    cluster_status, estimates, service_status, steps,
)
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights import Insight, Settings, Snapshot
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import parse_time
from support.update_status import load, scenarios, schema_errors, snapshot, status_schema
from support.paths import UNIT_FIXTURES

FLOW_FIXTURES = UNIT_FIXTURES / "flow"


def _at(text: str) -> datetime:
    return parse_time(f"2026-11-22T{text}Z")


def _objects(name: str, kind: str) -> List[Dict[str, Any]]:
    return [o for o in load(name)["objects"] if o["kind"] == kind]


def _keystone(name: str = "upgrade_progressing") -> Dict[str, Any]:
    (lifecycle,) = [o for o in _objects(name, "ServiceLifecycle") if o["metadata"]["name"] == "keystone"]
    return lifecycle


def _entry(at: str, lifecycle: Optional[Dict[str, Any]] = None, phases: Optional[List[Dict[str, Any]]] = None,
           insights: Optional[List[Insight]] = None, settings: Optional[Settings] = None) -> Dict[str, Any]:
    return service_status(lifecycle or _keystone(), _objects("upgrade_progressing", "Phase") if phases is None
                          else phases, insights or [], settings or Settings(), _at(at))


def _insight(level: str, service: str = "keystone") -> Insight:
    return Insight(uid=f"x-{level}", started_at=_at("05:08:30"), service=service, namespace="openstack",
                   resources=[], level=level, type="Unknown", summary="something")


# -- completion and phases ----------------------------------------------------
def test_a_running_update_lists_its_phases_and_what_is_planned() -> None:
    entry = _entry("05:08:45")
    assert (entry["assessment"], entry["currentPhase"], entry["completion"]) == ("Progressing", "upgrade", 25)
    assert entry["versions"] == {"previous": "2025.1", "target": "2025.2"}
    assert entry["phases"] == [
        {"type": "trafficdrain", "name": "keystone-trafficdrain-aaaa1111", "state": "Succeeded", "durationSeconds": 3},
        {"type": "upgrade", "name": "keystone-upgrade-bbbb2222", "state": "Running", "durationSeconds": 40},
        {"type": "test", "state": "Pending"},
        {"type": "trafficrollout", "state": "Pending"},
    ]
    assert entry["startedAt"] == "2026-11-22T05:08:00Z" and "completedAt" not in entry


def test_a_rollback_chain_counts_its_extra_phases_as_planned() -> None:
    record = yaml.safe_load((FLOW_FIXTURES / "update_rolled_back.yaml").read_text())
    entry = service_status(record, [], [], Settings(), _at("04:05:00"))
    assert [(p["type"], p["state"]) for p in entry["phases"]] == [
        ("trafficdrain", "Succeeded"), ("upgrade", "Succeeded"), ("test", "Failed"), ("rollback", "Succeeded"),
        ("test", "Succeeded"), ("trafficrollout", "Succeeded")]
    assert (entry["assessment"], entry["completion"]) == ("Degraded", 83)  # 5 of 6
    assert entry["completedAt"] == "2026-11-22T04:00:12Z" and "estimatedCompletionAt" not in entry


def test_planned_phases_a_flow_passed_are_skipped_and_extra_ones_inserted() -> None:
    lifecycle = {"metadata": {"name": "keystone"}, "status": {
        "flow": {"state": "Running", "planned": ["trafficdrain", "rollback", "test", "trafficrollout"],
                 "phases": ["r", "u"]},
        "history": [{"name": "r", "type": "rollback", "result": "Succeeded"},
                    {"name": "u", "type": "uninstall", "result": "Running"}]}}
    assert [(s.type, s.name) for s in steps(lifecycle, [])] == [
        ("rollback", "r"), ("uninstall", "u"), ("test", ""), ("trafficrollout", "")]


def test_a_succeeded_flow_is_complete_without_the_phases_it_did_not_need() -> None:
    status = cluster_status(snapshot("quiet"), Settings())
    keystone, = [s for s in status["services"] if s["name"] == "keystone"]
    assert (keystone["assessment"], keystone["completion"]) == ("Completed", 100)
    assert [p["type"] for p in keystone["phases"]] == ["trafficdrain", "upgrade", "test"]  # traffic was in place


def test_a_service_never_updated_is_complete() -> None:
    status = cluster_status(snapshot("quiet"), Settings())
    glance, = [s for s in status["services"] if s["name"] == "glance"]
    assert glance == {"name": "glance", "namespace": "openstack", "assessment": "Completed", "state": "Operational",
                      "completion": 100, "versions": {"target": "2025.2"}, "phases": []}


def test_a_failed_service_without_a_flow_is_degraded() -> None:
    lifecycle = {"metadata": {"name": "nova", "namespace": "openstack"}, "status": {"state": "Failed"}}
    assert service_status(lifecycle, [], [], Settings(), _at("05:00:00"))["assessment"] == "Degraded"


# -- the estimate ---------------------------------------------------------------
def test_the_estimate_is_the_median_of_earlier_runs_times_the_overestimate() -> None:
    lifecycle = _keystone()
    flow_steps = steps(lifecycle, _objects("upgrade_progressing", "Phase"))
    # The Failed 10s upgrade, and this flow's own drain, are not earlier runs.
    assert estimates(lifecycle, flow_steps, Settings()) == pytest.approx([2.4, 60.0, 24.0, 6.0])
    # 05:08:45 + (60 - 40) + 24 + 6
    assert _entry("05:08:45")["estimatedCompletionAt"] == "2026-11-22T05:09:35Z"
    assert _entry("05:08:45", settings=Settings(overestimate=1.0))["estimatedCompletionAt"] == "2026-11-22T05:09:20Z"


def test_without_history_the_estimate_is_the_timeout_of_the_running_phase() -> None:
    lifecycle = _keystone()
    lifecycle["status"]["history"] = lifecycle["status"]["history"][-2:]  # this flow's own only
    # The running Phase's 300s, times 1.2, for each phase: 360 - 40 + 360 + 360.
    assert _entry("05:08:45", lifecycle)["estimatedCompletionAt"] == "2026-11-22T05:26:05Z"
    # No Phase to read a timeout from: 600s each. 720 - 40 + 720 + 720.
    assert _entry("05:08:45", lifecycle, phases=[])["estimatedCompletionAt"] == "2026-11-22T05:44:05Z"


def test_a_running_phase_past_its_estimate_leaves_only_the_rest() -> None:
    assert _entry("05:10:30")["estimatedCompletionAt"] == "2026-11-22T05:11:00Z"  # 0 + 24 + 6


@pytest.mark.parametrize("at, assessment", [
    ("05:09:32", "Progressing"),
    ("05:09:33", "Progressing-Slow"),  # past 05:09:32.4
    ("05:19:32", "Progressing-Slow"),
    ("05:19:33", "Stalled"),  # past the deadline by more than 600s
])
def test_slow_then_stalled_at_the_deadline_and_the_margin(at: str, assessment: str) -> None:
    assert _entry(at)["assessment"] == assessment


def test_the_stall_margin_is_a_setting() -> None:
    assert _entry("05:10:33", settings=Settings(stall_margin_seconds=60))["assessment"] == "Stalled"


def test_a_flow_that_has_not_started_a_phase_is_pending_until_its_deadline() -> None:
    lifecycle = _keystone()
    lifecycle["status"]["flow"]["phases"] = []
    assert _entry("05:08:10", lifecycle)["assessment"] == "Pending"
    assert "currentPhase" not in _entry("05:08:10", lifecycle)
    assert _entry("05:09:33", lifecycle)["assessment"] == "Progressing-Slow"


# -- Degraded -------------------------------------------------------------------
def test_an_error_of_the_service_degrades_a_running_update() -> None:
    assert _entry("05:08:45", insights=[_insight("Error")])["assessment"] == "Degraded"
    assert _entry("05:08:45", insights=[_insight("Critical")])["assessment"] == "Degraded"
    assert _entry("05:08:45", insights=[_insight("Warning")])["assessment"] == "Progressing"
    assert _entry("05:08:45", insights=[_insight("Error", service="glance")])["assessment"] == "Progressing"


def test_a_failed_upgrade_is_degraded() -> None:
    status = cluster_status(snapshot("upgrade_failed"), Settings())
    (keystone,) = status["services"]
    assert (keystone["assessment"], keystone["completion"]) == ("Degraded", 25)
    assert "currentPhase" not in keystone
    assert [i["impact"]["level"] for i in status["insights"]] == ["Error", "Error"]


# -- the whole status -------------------------------------------------------------
def test_the_updating_condition_names_the_services_and_keeps_its_transition_time() -> None:
    first = cluster_status(snapshot("upgrade_progressing"), Settings())
    (cond,) = first["conditions"]
    assert (cond["status"], cond["reason"]) == ("True", "ServicesUpdating")
    assert cond["message"] == "keystone (openstack) is updating"
    later = snapshot("upgrade_slow")
    again = cluster_status(later, Settings(), previous=first)
    assert again["conditions"][0]["lastTransitionTime"] == "2026-11-22T05:08:45Z"
    quiet = cluster_status(snapshot("quiet"), Settings(), previous=first)
    assert (quiet["conditions"][0]["status"], quiet["conditions"][0]["reason"]) == ("False", "AllServicesAtRest")
    assert quiet["conditions"][0]["lastTransitionTime"] == "2026-11-22T06:00:00Z"


def test_an_insight_keeps_the_start_it_had_while_it_lasts() -> None:
    snap = snapshot("upgrade_failed")
    first = cluster_status(snap, Settings())
    previous = copy.deepcopy(first)
    job = next(i for i in previous["insights"] if i["uid"].startswith("jobs-"))
    job["startedAt"] = "2026-11-22T05:01:00Z"  # seen earlier than its condition says
    phase = next(i for i in previous["insights"] if i["uid"].startswith("phases-"))
    phase["startedAt"] = "2026-11-22T05:11:00Z"  # a later start is no better than the Phase's own
    previous["insights"].append(dict(job, uid="gone-1234"))
    later = copy.deepcopy(snap)
    later.now += timedelta(minutes=3)
    status = cluster_status(later, Settings(), previous=previous)
    started = {i["uid"]: i["startedAt"] for i in status["insights"]}
    assert started == {job["uid"]: "2026-11-22T05:01:00Z", phase["uid"]: "2026-11-22T05:09:30Z"}


def test_the_same_snapshot_and_previous_give_the_same_status() -> None:
    doc = load("upgrade_failed")
    first = cluster_status(Snapshot.from_objects(doc["objects"], parse_time(doc["now"])), Settings())
    shuffled = copy.deepcopy(doc["objects"])
    random.Random(7).shuffle(shuffled)
    second = cluster_status(Snapshot.from_objects(shuffled, parse_time(doc["now"])), Settings(), previous=None)
    assert json.dumps(first, sort_keys=False) == json.dumps(second, sort_keys=False)
    assert cluster_status(snapshot("upgrade_failed"), Settings(), previous=first) == first


def test_services_come_sorted_by_namespace_then_name() -> None:
    status = cluster_status(snapshot("backups"), Settings())
    names = [(s["namespace"], s["name"]) for s in status["services"]]
    assert names == sorted(names) and len(names) == 6
    assert status["conditions"][0]["message"] == (  # cinder's flow is over
        "5 services are updating: glance (openstack), heat (openstack), keystone (openstack), nova (openstack), "
        "placement (openstack)")


@pytest.mark.parametrize("name", scenarios())
def test_the_status_validates_against_the_crd(name: str) -> None:
    status = cluster_status(snapshot(name), Settings())
    assert schema_errors(status, status_schema()) == []


def test_the_schema_check_finds_what_the_apiserver_would_refuse_or_drop() -> None:
    status = cluster_status(snapshot("upgrade_failed"), Settings())
    status["services"][0]["assessment"] = "Slow"
    status["services"][0]["eta"] = "soon"
    status["insights"][0]["startedAt"] = "yesterday"
    del status["insights"][1]["impact"]["summary"]
    errors = schema_errors(status, status_schema())
    assert len(errors) == 4, errors


def test_this_flow_own_phases_are_not_its_history_even_without_a_start_time() -> None:
    lifecycle = {"metadata": {"name": "keystone"}, "status": {
        "flow": {"state": "Running", "planned": ["upgrade", "test"], "phases": ["u2"]},
        "history": [
            {"name": "u1", "type": "upgrade", "result": "Succeeded",
             "startedAt": "2026-11-22T04:00:00Z", "completedAt": "2026-11-22T04:00:10Z"},
            {"name": "u2", "type": "upgrade", "result": "Succeeded",
             "startedAt": "2026-11-22T05:00:00Z", "completedAt": "2026-11-22T05:01:40Z"}]}}
    flow_steps = steps(lifecycle, [])
    assert estimates(lifecycle, flow_steps, Settings()) == pytest.approx([12.0, 720.0])  # not median(10, 100)


def test_a_namespace_the_credentials_may_not_read_keeps_what_it_had() -> None:
    """A runner bound in its own namespace refreshes the status: the entries
    and insights of namespaces it may not read stay as last written, and the
    computed ones of those namespaces (from no pods or Jobs) are not used."""
    snap = snapshot("upgrade_failed")
    written = cluster_status(snap, Settings())
    assert written["insights"] and {i["scope"]["namespace"] for i in written["insights"]} == {"openstack"}
    blind = copy.deepcopy(snap)
    blind.now += timedelta(minutes=3)
    blind.pods, blind.jobs, blind.deployments, blind.releases = [], [], [], []
    blind.unread = {"openstack"}
    status = cluster_status(blind, Settings(), previous=written)
    assert status["services"] == written["services"]
    assert status["insights"] == written["insights"]
    # Read again, the namespace's entries are computed from what it holds.
    seen = copy.deepcopy(blind)
    seen.unread = set()
    assert cluster_status(seen, Settings(), previous=written)["insights"] != written["insights"]


# -- sites (updatestatus/site.py) ---------------------------------------------------
def test_a_site_member_carries_its_site_and_the_status_its_sites() -> None:
    status = cluster_status(snapshot("site_mid_run"), Settings())
    entries = {s["name"]: s for s in status["services"]}
    assert entries["placement"]["site"] == {"name": "example", "level": 2, "waitingFor": "keystone (Installing)"}
    assert entries["mariadb"]["site"] == {"name": "example", "level": 0}
    assert "site" not in entries["glance"]
    (site,) = status["sites"]
    assert (site["name"], site["done"], site["completion"]) == ("example", 3, 60)
    assert site["estimatedCompletionAt"] == "2026-11-26T05:12:30Z"


def test_without_a_site_the_status_has_no_sites() -> None:
    assert "sites" not in cluster_status(snapshot("quiet"), Settings())


def test_the_same_site_snapshot_gives_the_same_status_and_a_later_one_the_same_sites() -> None:
    snap = snapshot("site_mid_run")
    first = cluster_status(snap, Settings())
    assert cluster_status(snapshot("site_mid_run"), Settings(), previous=first) == first
    later = copy.deepcopy(snap)
    later.now += timedelta(seconds=40)
    assert cluster_status(later, Settings(), previous=first)["sites"] == first["sites"]


def test_an_unread_namespace_keeps_its_entries_but_their_site_is_the_records() -> None:
    """The ServiceLifecycles are read cluster-wide, so the site is current
    even where the pods and Jobs could not be read."""
    written = cluster_status(snapshot("site_mid_run"), Settings())
    previous = copy.deepcopy(written)
    for entry in previous["services"]:
        entry.pop("site", None)
    entry = next(e for e in previous["services"] if e["name"] == "keystone")
    entry["site"] = {"name": "gone"}
    blind = snapshot("site_mid_run")
    blind.unread = {"openstack"}
    status = cluster_status(blind, Settings(), previous=previous)
    assert status["services"] == written["services"]
    assert status["sites"] == written["sites"]
