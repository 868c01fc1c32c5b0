"""plugins/modules/update_status.py: the detail
levels are the report's."""

from __future__ import annotations

from ansible_collections.lcm.openstack.plugins.modules import update_status as module
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.report import DETAILS
from support.module_docs import documented_options

DOCS = documented_options(module)


def test_the_detail_levels_are_the_reports() -> None:
    assert DOCS["details"]["choices"] == list(DETAILS) and DOCS["details"]["default"] == "none"
