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


@pytest.mark.parametrize("text, expected", [
    ("2026-11-24T03:00:00.123456Z", datetime(2026, 11, 24, 3, 0, 0, 123456, tzinfo=timezone.utc)),
    ("2026-11-24T03:00:00Z", datetime(2026, 11, 24, 3, 0, 0, tzinfo=timezone.utc)),
    # Go's RFC3339Nano: nine digits, or as few as the value needs.
    ("2026-11-24T03:00:00.123456789Z", datetime(2026, 11, 24, 3, 0, 0, 123456, tzinfo=timezone.utc)),
    ("2026-11-24T03:00:00.12Z", datetime(2026, 11, 24, 3, 0, 0, 120000, tzinfo=timezone.utc)),
    ("2026-11-24T03:00:00.5+01:00", datetime(2026, 11, 24, 2, 0, 0, 500000, tzinfo=timezone.utc)),
    ("", None), (None, None),
])
def test_a_time_is_read_as_the_apiserver_or_a_go_client_writes_it(text, expected) -> None:
    assert timefmt.parse_time(text) == expected


def test_micro_times_are_written_with_microseconds_and_read_back_alike() -> None:
    when = datetime(2026, 11, 24, 3, 0, 5, 42, tzinfo=timezone.utc)
    assert timefmt.format_micro(when) == "2026-11-24T03:00:05.000042Z"
    assert timefmt.parse_time(timefmt.format_micro(when)) == when
    assert timefmt.parse_time(timefmt.now_micro()).tzinfo is not None


def test_objects_sort_oldest_first_by_time_not_by_text() -> None:
    def obj(name, started=None, created=None):
        return {"metadata": {"name": name, "creationTimestamp": created}, "status": {"startedAt": started}}
    objects = [
        obj("a-test", "2026-11-24T03:00:05.910000Z"),
        obj("b-upgrade", "2026-11-24T03:00:05Z"),                # an older collection's whole second
        obj("c-rollout", "2026-11-24T03:00:05.120000Z"),
        obj("d-pending", created="2026-11-24T03:00:06Z"),        # not started: when it was made
        obj("e-unknown"),                                         # neither: first
        obj("f-tie", "2026-11-24T03:00:05Z"),                    # the same time: by name
    ]
    assert [o["metadata"]["name"] for o in sorted(objects, key=timefmt.started_order)] == [
        "e-unknown", "b-upgrade", "f-tie", "c-rollout", "a-test", "d-pending"]
