"""plugins/module_utils/updatestatus/insights/jobs.py: Jobs that fail or run past their expected time, and only those."""

from __future__ import annotations

from datetime import timedelta

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus import insights
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights import Settings, jobs
from support.update_status import expected_of, found_by, scenarios, snapshot, uids


@pytest.mark.parametrize("name", scenarios())
def test_it_finds_exactly_what_each_scenario_expects_of_it(name: str) -> None:
    """A scenario made for another producer expects nothing of this one."""
    assert found_by(jobs, name) == expected_of(jobs, name)


def test_a_job_expected_duration_annotation_overrides_the_default() -> None:
    snap = snapshot("jobs")
    assert "keystone-bootstrap" not in uids(snap)  # 720s, expected 900s
    snap.now += timedelta(seconds=181)
    assert "keystone-bootstrap" in uids(snap)
    assert "keystone-ks-user" in {i.resources[0]["name"] for i in
                                  insights.jobs.produce(snap, Settings(job_expected_seconds=60))}
