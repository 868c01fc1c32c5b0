"""plugins/module_utils/updatestatus/insights: each producer on scenarios of cluster objects.

A scenario (fixtures/update_status/<name>.yaml) lists every insight all the
producers together must find in it, and nothing else: an object it does not
expect an insight for (a healthy pod, a pod not Ready for less than the
threshold, the failure of an earlier flow) is a negative case.
"""

from __future__ import annotations

import copy
from datetime import timedelta
from typing import Any, Dict, List

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus import insights
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights import (
    IMPACTS, LEVELS, PRODUCERS, Insight, Settings, Snapshot, produce_all,
)
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import format_time, parse_time
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.scope import Scope
from support.update_status import load, scenarios, snapshot

EXPECT_KEYS = {"producer", "resource", "resources", "level", "type", "startedAt", "summary", "summary_contains",
               "description", "description_contains", "reference"}


def _by_resource(found: List[Insight]) -> Dict[str, Insight]:
    """producer:Kind/name of the main resource -> the insight."""
    out = {}
    for insight in found:
        main = insight.resources[0]
        key = f"{insight.uid.split('-')[0]}:{main['kind']}/{main['name']}"
        assert key not in out, f"two insights on {key}: {out.get(key)} and {insight}"
        out[key] = insight
    return out


@pytest.mark.parametrize("name", scenarios())
def test_scenario_yields_exactly_the_expected_insights(name: str) -> None:
    doc = load(name)
    snap = snapshot(name)
    before = copy.deepcopy(snap)
    found = _by_resource(produce_all(snap, Settings()))
    assert snap == before, "producers must not modify the snapshot"
    expected = {f"{e['producer']}:{e['resource']}": e for e in doc["expect"]}
    assert sorted(found) == sorted(expected), {k: v.summary for k, v in found.items()}
    for key, want in expected.items():
        got = found[key]
        assert set(want) <= EXPECT_KEYS, f"unknown expect keys in {name}: {set(want) - EXPECT_KEYS}"
        assert (got.level, got.type) == (want["level"], want["type"]), got
        assert format_time(got.started_at) == want["startedAt"], got
        assert got.namespace == "openstack" and got.service
        if "resources" in want:
            assert [f"{r['kind']}/{r['name']}" for r in got.resources] == want["resources"]
        for field in ("summary", "description", "reference"):
            if field in want:
                assert getattr(got, field) == want[field], got
            if f"{field}_contains" in want:
                assert want[f"{field}_contains"] in getattr(got, field), got


@pytest.mark.parametrize("name", scenarios())
def test_every_insight_is_well_formed(name: str) -> None:
    for insight in produce_all(snapshot(name), Settings()):
        assert insight.level in LEVELS and insight.type in IMPACTS, insight
        assert insight.summary and "\n" not in insight.summary, insight
        assert insight.reference.startswith(("docs/update-status.md#", "kubectl ")), insight
        assert insight.started_at.tzinfo is not None
        assert all(set(r) == {"kind", "name", "namespace"} for r in insight.resources)


def test_every_producer_is_registered_once_and_named_after_its_module() -> None:
    assert len({p.NAME for p in PRODUCERS}) == len(PRODUCERS) == 7
    for producer in PRODUCERS:
        assert producer.__name__.rsplit(".", 1)[-1] == producer.NAME


def test_each_producer_runs_on_its_own() -> None:
    found = insights.pods.produce(snapshot("pods"), Settings())
    assert {i.uid.split("-")[0] for i in found} == {"pods"} and len(found) == 4
    assert insights.pods.produce(snapshot("releases"), Settings()) == []


@pytest.mark.parametrize("minutes, expected", [(3, 5), (5, 4), (6, 4), (7, 3), (10, 2)])
def test_the_unready_threshold_is_a_setting(minutes: int, expected: int) -> None:
    # pods.yaml: unready for 4m, 7m and 10m (the init pod), plus the crash and the pull.
    found = insights.pods.produce(snapshot("pods"), Settings(pod_unready_minutes=minutes))
    assert len(found) == expected, [i.summary for i in found]


def test_a_pod_unready_for_exactly_the_threshold_is_not_yet_an_insight() -> None:
    snap = snapshot("pods")
    snap.now = parse_time("2026-11-22T05:18:00Z")  # the 7m pod: exactly 5m
    names = [i.resources[0]["name"] for i in insights.pods.produce(snap, Settings())]
    assert "keystone-api-unready-7m" not in names
    snap.now += timedelta(seconds=1)
    names = [i.resources[0]["name"] for i in insights.pods.produce(snap, Settings())]
    assert "keystone-api-unready-7m" in names


def _pod(snap: Snapshot, name: str) -> Dict[str, Any]:
    (pod,) = [p for p in snap.pods if p["metadata"]["name"] == name and p["metadata"]["namespace"] == "openstack"]
    return pod


def _uids(snap: Snapshot) -> Dict[str, str]:
    return {i.resources[0]["name"]: i.uid for i in produce_all(snap, Settings())}


def test_the_uid_stays_while_the_problem_does_whatever_its_text_and_time() -> None:
    first = _uids(snapshot("pods"))
    later = snapshot("pods")
    later.now += timedelta(minutes=30)
    crash = _pod(later, "keystone-api-crash")["status"]
    crash["containerStatuses"][0]["restartCount"] = 17
    crash["containerStatuses"][0]["state"]["waiting"]["message"] = "back-off 5m0s restarting failed container"
    crash["conditions"][0]["lastTransitionTime"] = "2026-11-22T05:40:00Z"
    # The kubelet alternates ErrImagePull and ImagePullBackOff: the same problem.
    pull = _pod(later, "keystone-db-sync-pull")["status"]["containerStatuses"][0]["state"]["waiting"]
    pull.update(reason="ErrImagePull", message="rpc error: not found")
    second = _uids(later)
    for name in ("keystone-api-crash", "keystone-db-sync-pull", "keystone-api-unready-7m"):
        assert second[name] == first[name], name


def test_the_uid_differs_for_another_object_or_another_problem() -> None:
    first = _uids(snapshot("pods"))
    assert len(set(first.values())) == len(first)
    moved = snapshot("pods")
    _pod(moved, "keystone-api-crash")["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] = "ErrImagePull"
    assert _uids(moved)["keystone-api-crash"] != first["keystone-api-crash"]  # now an image problem


def test_a_job_expected_duration_annotation_overrides_the_default() -> None:
    snap = snapshot("jobs")
    assert "keystone-bootstrap" not in _uids(snap)  # 720s, expected 900s
    snap.now += timedelta(seconds=181)
    assert "keystone-bootstrap" in _uids(snap)
    assert "keystone-ks-user" in {i.resources[0]["name"] for i in
                                  insights.jobs.produce(snap, Settings(job_expected_seconds=60))}


def test_a_phase_of_the_running_flow_counts_before_the_flow_lists_it() -> None:
    # The phase engine creates the Phase, then adds it to the flow's phases.
    doc = load("backups")
    for obj in doc["objects"]:
        if obj["kind"] == "ServiceLifecycle" and obj["metadata"]["name"] == "keystone":
            obj["status"]["flow"]["phases"] = []
        if obj["kind"] == "Phase" and obj["metadata"]["name"] == "keystone-upgrade-1":
            obj["spec"]["flow"] = "update/2026-11-22T05:09:00Z"
    snap = Snapshot.from_objects(doc["objects"], parse_time(doc["now"]))
    (phase,) = [p for p in snap.phases if p["metadata"]["name"] == "keystone-upgrade-1"]
    assert Scope(snap).is_current(phase)
    assert "keystone-upgrade-1" in _uids(snap)


def test_a_pending_release_is_stuck_only_once_helm_had_its_time() -> None:
    snap = snapshot("releases")
    snap.now = parse_time("2026-11-22T05:15:00Z")  # keystone's revision 3: pending for exactly 10m
    assert [i.summary for i in insights.releases.produce(snap, Settings())] == [
        "Helm release glance is pending-install at revision 1"]
    snap.now += timedelta(seconds=1)
    assert len(insights.releases.produce(snap, Settings())) == 2
    assert len(insights.releases.produce(snapshot("releases"), Settings(release_pending_minutes=1))) == 3


def test_helm_records_keep_their_metadata_only() -> None:
    snap = snapshot("upgrade_progressing")
    assert snap.releases and all(set(s) == {"apiVersion", "kind", "metadata"} for s in snap.releases)


def test_a_producer_that_raises_is_an_insight_and_hides_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        NAME = "broken"

        @staticmethod
        def produce(_snapshot: Snapshot, _settings: Settings) -> List[Insight]:
            raise KeyError("metadata")

    monkeypatch.setattr(insights, "PRODUCERS", PRODUCERS + [Broken])
    found = produce_all(snapshot("releases"), Settings())
    assert [i.level for i in found] == ["Critical", "Critical", "Warning"]
    assert found[-1].type == "Unknown" and "broken insight producer failed: KeyError" in found[-1].summary


def test_insights_come_most_severe_first_then_oldest() -> None:
    doc = load("pods")
    doc["objects"] += [o for o in load("releases")["objects"]  # keystone's Helm records: a Critical
                       if o["kind"] == "Secret" and o["metadata"]["name"].startswith("sh.helm.release.v1.keystone.")]
    found = produce_all(Snapshot.from_objects(doc["objects"], parse_time(doc["now"])), Settings())
    assert [i.level for i in found] == ["Critical", "Error", "Error", "Warning", "Warning"]
    errors = [i for i in found if i.level == "Error"]
    assert errors[0].started_at < errors[1].started_at
