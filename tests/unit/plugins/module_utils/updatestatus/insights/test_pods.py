"""plugins/module_utils/updatestatus/insights/pods.py: pods that crash, cannot pull, or stay unready past the threshold; an
insight's uid stays with its problem."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Dict

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import parse_time
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus import insights
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights import Settings, Snapshot, pods
from support.update_status import expected_of, found_by, scenarios, snapshot, uids


@pytest.mark.parametrize("name", scenarios())
def test_it_finds_exactly_what_each_scenario_expects_of_it(name: str) -> None:
    """A scenario made for another producer expects nothing of this one."""
    assert found_by(pods, name) == expected_of(pods, name)


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


def test_the_uid_stays_while_the_problem_does_whatever_its_text_and_time() -> None:
    first = uids(snapshot("pods"))
    later = snapshot("pods")
    later.now += timedelta(minutes=30)
    crash = _pod(later, "keystone-api-crash")["status"]
    crash["containerStatuses"][0]["restartCount"] = 17
    crash["containerStatuses"][0]["state"]["waiting"]["message"] = "back-off 5m0s restarting failed container"
    crash["conditions"][0]["lastTransitionTime"] = "2026-11-22T05:40:00Z"
    # The kubelet alternates ErrImagePull and ImagePullBackOff: the same problem.
    pull = _pod(later, "keystone-db-sync-pull")["status"]["containerStatuses"][0]["state"]["waiting"]
    pull.update(reason="ErrImagePull", message="rpc error: not found")
    second = uids(later)
    for name in ("keystone-api-crash", "keystone-db-sync-pull", "keystone-api-unready-7m"):
        assert second[name] == first[name], name


def test_the_uid_differs_for_another_object_or_another_problem() -> None:
    first = uids(snapshot("pods"))
    assert len(set(first.values())) == len(first)
    moved = snapshot("pods")
    _pod(moved, "keystone-api-crash")["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] = "ErrImagePull"
    assert uids(moved)["keystone-api-crash"] != first["keystone-api-crash"]  # now an image problem
