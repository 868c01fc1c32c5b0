"""plugins/module_utils/updatestatus/insights/drift.py: each drifted object of a
release at rest is an insight naming it and its fields, never a value; the
same drift keeps the time it was first seen, a new field is a new insight; a
refresh that read no drift keeps what the status had."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any, Dict, List

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.drift.model import ObjectDrift
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.assessment import cluster_status
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights import Settings, Snapshot, drift
from support.update_status import expected_of, found_by, scenarios, snapshot

KEYSTONE = ("openstack", "keystone")


@pytest.mark.parametrize("name", scenarios())
def test_it_finds_exactly_what_each_scenario_expects_of_it(name: str) -> None:
    """A scenario made for another producer expects nothing of this one."""
    assert found_by(drift, name) == expected_of(drift, name)


def _status(snap: Snapshot, previous: Any = None) -> List[Dict[str, Any]]:
    return [i for i in cluster_status(snap, Settings(), previous)["insights"] if i["uid"].startswith("drift-")]


def test_a_deployment_scaled_by_hand_is_named_with_its_field() -> None:
    snap = snapshot("drift")
    (found,) = [i for i in drift.produce(snap, Settings()) if i.resources[0]["name"] == "keystone-api"]
    assert found.resources == [{"kind": "Deployment", "name": "keystone-api", "namespace": "openstack"}]
    assert "Deployment/keystone-api" in found.summary and "spec.replicas" in found.summary
    assert (found.service, found.namespace, found.started_at) == ("keystone", "openstack", snap.now)
    assert "drift: correct" in found.description and "playbooks/site.yml" in found.description
    assert "Reported only" in found.description


def test_the_same_drift_keeps_its_first_time_and_a_field_more_is_a_new_insight() -> None:
    first = snapshot("drift")
    before = _status(first)
    started = {i["uid"]: i["startedAt"] for i in before}
    later = snapshot("drift")
    later.now = first.now + timedelta(minutes=30)
    again = _status(later, {"insights": before})
    assert {i["uid"]: i["startedAt"] for i in again} == started  # nothing new: every one as first seen

    later.drift[KEYSTONE] = [ObjectDrift("Deployment", "keystone-api", "openstack",
                                         fields=["spec.replicas", "spec.template.spec.containers[keystone-api].image"])]
    changed = {i["scope"]["resources"][0]["name"]: i for i in _status(later, {"insights": before})}
    scaled = [i for i in before if i["scope"]["resources"][0]["name"] == "keystone-api"][0]
    assert changed["keystone-api"]["uid"] != scaled["uid"]
    assert changed["keystone-api"]["startedAt"] == "2026-11-22T06:30:00Z"
    assert "containers[keystone-api].image" in changed["keystone-api"]["impact"]["summary"]
    assert scaled["uid"] not in {i["uid"] for i in changed.values()}  # the drift as it was is over


def test_the_uid_is_the_release_the_object_and_the_sorted_fields() -> None:
    snap = snapshot("drift")
    one = {i.resources[0]["name"]: i.uid for i in drift.produce(snap, Settings())}
    snap.drift[("openstack", "nova")] = [ObjectDrift("Deployment", "nova-api-osapi", "openstack",
                                                     fields=["spec.replicas", "spec.template.spec.containers[nova-osapi].image"])]
    two = {i.resources[0]["name"]: i.uid for i in drift.produce(snap, Settings())}
    assert one == two  # the order of the fields, and the dry run's note, make no other insight
    snap.drift[KEYSTONE] = [ObjectDrift("Deployment", "keystone-api", "other", fields=["spec.replicas"])]
    assert drift.produce(snap, Settings())[0].uid == one["keystone-api"]  # same object of the same release


def test_a_service_whose_flow_runs_gets_none() -> None:
    snap = snapshot("drift")
    assert "glance-api" not in {i.resources[0]["name"] for i in drift.produce(snap, Settings())}
    keystone = [lc for lc in snap.lifecycles if lc["metadata"]["name"] == "keystone"][0]
    keystone["status"]["flow"]["state"] = "Running"
    assert [i.resources[0]["name"] for i in drift.produce(snap, Settings())] == ["nova-api-osapi"]


def test_a_service_not_operational_gets_none() -> None:
    snap = snapshot("drift")
    for lc in snap.lifecycles:
        lc["status"]["state"] = "Failed"
    assert drift.produce(snap, Settings()) == []


def test_no_value_appears() -> None:
    """The dry run gives the fields as they are and as the manifest sets
    them, for a diff: none of it reaches the status."""
    snap = snapshot("drift")
    snap.drift[KEYSTONE] = [ObjectDrift("Secret", "keystone-db", "openstack", fields=["data.password"],
                                        was={"data.password": "aGFuZC1zZXQtc2VjcmV0"},
                                        wanted={"data.password": "Y2hhcnQtc2VjcmV0"})]
    text = json.dumps(cluster_status(snap, Settings()))
    assert "Secret/keystone-db" in text and "data.password" in text
    assert "aGFuZC1zZXQtc2VjcmV0" not in text and "Y2hhcnQtc2VjcmV0" not in text


def test_a_refresh_that_read_no_drift_keeps_the_drift_insights_of_services_at_rest() -> None:
    """The phase engine's refresh reads no drift: keystone's and nova's stay
    with the time they were first seen; once keystone's flow runs, its go."""
    before = _status(snapshot("drift"))
    cheap = snapshot("drift")
    cheap.drift, cheap.now = None, cheap.now + timedelta(minutes=5)
    assert drift.produce(cheap, Settings()) == []
    assert _status(cheap, {"insights": before}) == before
    keystone = [lc for lc in cheap.lifecycles if lc["metadata"]["name"] == "keystone"][0]
    keystone["status"]["flow"]["state"] = "Running"
    assert [i["scope"]["service"] for i in _status(cheap, {"insights": before})] == ["nova"]


def test_a_release_compared_again_without_drift_ends_its_insights() -> None:
    before = _status(snapshot("drift"))
    fixed = snapshot("drift")
    fixed.drift[KEYSTONE] = []
    assert {i["scope"]["service"] for i in _status(fixed, {"insights": before})} == {"nova"}
    # One the refresh did not compare (a kind it may not list) keeps its own.
    del fixed.drift[KEYSTONE]
    assert _status(fixed, {"insights": before}) == before


def test_no_drift_read_and_no_drift_before_is_no_drift_insight() -> None:
    snap = snapshot("quiet")
    assert snap.drift is None and drift.produce(snap, Settings()) == [] and _status(snap) == []
