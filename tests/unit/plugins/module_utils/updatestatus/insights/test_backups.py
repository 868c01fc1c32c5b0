"""plugins/module_utils/updatestatus/insights/backups.py: upgrades whose database backup is missing or failed, and only those."""

from __future__ import annotations

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights import backups
from support.update_status import expected_of, found_by, scenarios


@pytest.mark.parametrize("name", scenarios())
def test_it_finds_exactly_what_each_scenario_expects_of_it(name: str) -> None:
    """A scenario made for another producer expects nothing of this one."""
    assert found_by(backups, name) == expected_of(backups, name)
