"""plugins/modules/helm_release_info.py: documented as it validates."""

from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.lcm.openstack.plugins.modules import helm_release_info as module
from support.module_docs import built_with, differences, documented_options

DOCS = documented_options(module)


def test_the_documentation_is_the_argument_spec() -> None:
    assert differences(module.argument_spec(), DOCS) == []


def test_main_builds_the_module_from_that_spec_with_check_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    built: Any = built_with(module, monkeypatch)
    assert built["argument_spec"] == module.argument_spec() and built["supports_check_mode"] is True


def test_a_release_is_read_in_a_namespace_that_must_be_given() -> None:
    assert DOCS["namespace"]["required"] is True and DOCS["namespace"]["aliases"] == ["release_namespace"]
    assert DOCS["name"]["aliases"] == ["release_name"] and not DOCS["name"].get("required")
