"""plugins/module_utils/updatestatus/insights/releases.py: Helm releases failed or stuck pending, and only those."""

from __future__ import annotations

from datetime import timedelta

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import parse_time
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus import insights
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights import Settings, releases
from support.update_status import expected_of, found_by, scenarios, snapshot


@pytest.mark.parametrize("name", scenarios())
def test_it_finds_exactly_what_each_scenario_expects_of_it(name: str) -> None:
    """A scenario made for another producer expects nothing of this one."""
    assert found_by(releases, name) == expected_of(releases, name)


def test_a_pending_release_is_stuck_only_once_helm_had_its_time() -> None:
    snap = snapshot("releases")
    snap.now = parse_time("2026-11-22T05:15:00Z")  # keystone's revision 3: pending for exactly 10m
    assert [i.summary for i in insights.releases.produce(snap, Settings())] == [
        "Helm release glance is pending-install at revision 1"]
    snap.now += timedelta(seconds=1)
    assert len(insights.releases.produce(snap, Settings())) == 2
    assert len(insights.releases.produce(snapshot("releases"), Settings(release_pending_minutes=1))) == 3
