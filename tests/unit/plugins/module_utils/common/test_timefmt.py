"""timefmt: the one place timestamps and durations are written and read."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.common import timefmt


@pytest.mark.parametrize("total, text", [
    (0, "0s"), (45, "45s"), (64, "1m04s"), (3900, "1h05m"), (183600, "2d03h"), (-3, "0s"),
])
def test_a_duration_reads_in_its_two_largest_units(total: float, text: str) -> None:
    assert timefmt.duration(total) == text


@pytest.mark.parametrize("total, text", [(None, "-"), (True, "-"), ("x", "-"), ("7", "7s"), (612, "10m12s")])
def test_an_unknown_duration_is_a_dash(total, text: str) -> None:
    assert timefmt.duration_or_dash(total) == text


def test_timestamps_round_trip_and_measure() -> None:
    at = datetime(2026, 11, 23, 12, 0, 5, tzinfo=timezone.utc)
    assert timefmt.format_time(at) == "2026-11-23T12:00:05Z"
    assert timefmt.parse_time("2026-11-23T12:00:05Z") == at
    assert timefmt.parse_time("2026-11-23T12:00:05.123456Z").microsecond == 123456  # a Lease's MicroTime
    assert timefmt.parse_time("") is None and timefmt.parse_time("soon") is None
    assert timefmt.seconds_between("2026-11-23T12:00:05Z", "2026-11-23T12:01:09Z") == 64
    assert timefmt.seconds_between(None, "2026-11-23T12:01:09Z") is None
    assert timefmt.parse_time(timefmt.now_text()) is not None
