"""plugins/module_utils/common/versions.py: versions compared run by run,
numbers as integers, words before numbers, a missing run as 0 or as a
release after its pre-releases."""

from __future__ import annotations

import functools

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.common.versions import compare, runs, satisfies

# Each pair strictly increasing.
EARLIER_LATER = [
    ("2025.1", "2025.2"), ("2025.2", "2026.1"), ("2024.2", "2025.1"),
    ("1.9", "1.10"), ("1.2.9", "1.10.0"), ("10.6", "11"), ("10.6.20", "10.11"),
    ("1.0", "1.0.1"), ("1.0rc1", "1.0"), ("1.0.0-rc1", "1.0.0"), ("1.0alpha", "1.0beta"),
    ("1.0beta2", "1.0rc1"), ("1.0rc1", "1.0rc2"), ("1.0rc9", "1.0rc10"), ("1.0rc1", "1.0.1"),
    ("0.3.29", "0.3.30+d3b6f0d0"), ("", "0.1"), ("caracal", "dalmatian"),
]

SAME = [("1.0", "1.0.0"), ("2025.1", "2025.01"), ("v1.2", "1.2"), ("1.0RC1", "1.0rc1"), ("1-0", "1.0"), ("", "0")]


@pytest.mark.parametrize("earlier, later", EARLIER_LATER)
def test_earlier_and_later_are_told_apart_both_ways(earlier: str, later: str) -> None:
    assert compare(earlier, later) == -1
    assert compare(later, earlier) == 1


@pytest.mark.parametrize("one, other", SAME)
def test_the_same_version_written_two_ways_is_equal(one: str, other: str) -> None:
    assert compare(one, other) == 0 and compare(other, one) == 0


def test_a_version_is_itself() -> None:
    for version in ("2026.1", "11.4.2", "1.0.0-rc1", ""):
        assert compare(version, version) == 0


def test_runs_are_numbers_and_lower_case_words() -> None:
    assert runs("v2025.1-RC2") == [2025, 1, "rc", 2]
    assert runs("vanilla1") == ["vanilla", 1]  # a v that starts a word stays


def test_sorting_by_compare_orders_a_mixed_list() -> None:
    shuffled = ["2026.1", "2025.1", "2025.2rc1", "2025.10", "2025.2"]
    assert sorted(shuffled, key=functools.cmp_to_key(compare)) == ["2025.1", "2025.2rc1", "2025.2", "2025.10", "2026.1"]


@pytest.mark.parametrize("version, minimum, ok", [
    ("11.4", "11", True), ("11", "11", True), ("11.0.0", "11", True), ("10.6", "11", False),
    ("2026.1", "2025.2", True), ("2025.1", "2025.2", False), ("11rc1", "11", False),
    ("10.6", "", True), ("", "11", False), ("", "", True),
])
def test_satisfies_is_the_minimum_or_later(version: str, minimum: str, ok: bool) -> None:
    assert satisfies(version, minimum) is ok
