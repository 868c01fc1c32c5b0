"""plugins/module_utils/common/openstack_release.py: N -> N+1 and SLURP ->
SLURP accepted, any other jump refused with the releases to pass through, a
move back refused, and versions that are no OpenStack release left alone."""

from __future__ import annotations

from typing import Any, Dict

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.common import openstack_release
from support.paths import UNIT_FIXTURES

PATHS = yaml.safe_load((UNIT_FIXTURES / "openstack_release" / "paths.yaml").read_text())


@pytest.mark.parametrize("case", PATHS, ids=[f"{c['current'] or 'none'}->{c['target']}" for c in PATHS])
def test_each_path_is_judged_as_openstack_supports_it(case: Dict[str, Any]) -> None:
    found = openstack_release.check(case["current"], case["target"])
    assert (found.supported, found.checked) == (case["supported"], case["checked"])
    assert found.through == case.get("through", [])
    assert case.get("says", "") in found.reason


def test_a_refused_jump_names_every_release_between_in_its_reason() -> None:
    found = openstack_release.check("2024.2", "2026.2")
    assert "pass through 2025.1, then 2026.1 first" in found.reason


def test_every_release_passed_through_is_itself_a_supported_step() -> None:
    for case in PATHS:
        path = [case["current"]] + case.get("through", []) + [case["target"]]
        if case.get("through"):
            assert all(openstack_release.check(a, b).supported for a, b in zip(path, path[1:])), path


def test_series_reads_only_year_named_releases() -> None:
    assert openstack_release.series("2026.1") == (2026, 1)
    assert openstack_release.series(" 2025.2 ") == (2025, 2)
    for other in ("2025.3", "2022.2", "2025", "2025.1.1", "caracal", None):
        assert openstack_release.series(other) is None  # type: ignore[arg-type]
