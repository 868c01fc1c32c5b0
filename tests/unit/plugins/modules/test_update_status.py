"""plugins/modules/update_status.py: documented as it validates; the detail
levels are the report's."""

from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.lcm.openstack.plugins.modules import update_status as module
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.report import DETAILS
from support.module_docs import built_with, differences, documented_options

DOCS = documented_options(module)


def test_the_documentation_is_the_argument_spec() -> None:
    assert differences(module.argument_spec(), DOCS) == []


def test_main_builds_the_module_from_that_spec_with_check_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    built: Any = built_with(module, monkeypatch)
    assert built["argument_spec"] == module.argument_spec() and built["supports_check_mode"] is True


def test_the_detail_levels_are_the_reports() -> None:
    assert DOCS["details"]["choices"] == list(DETAILS) and DOCS["details"]["default"] == "none"
