"""plugins/module_utils/updatestatus/report.py: the report, against golden files.

Each golden is fixtures/update_status/<scenario>[.<details>].report: the
report of the scenario's status, computed with no previous status. After a
deliberate change of wording, regenerate them with

    UPDATE_GOLDEN=1 pytest tests/unit/plugins/module_utils/updatestatus/test_report.py

and read the diff before keeping it.
"""

from __future__ import annotations

import os
from datetime import timedelta

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.assessment import cluster_status
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights import Settings
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import parse_time
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.report import report, site_line
from support.update_status import FIXTURES, snapshot

GOLDEN = [
    ("quiet", "none"),
    ("releases", "none"),  # nothing updating, but something wrong
    ("upgrade_progressing", "none"),
    ("upgrade_progressing", "phases"),
    ("upgrade_slow", "none"),
    ("upgrade_failed", "none"),
    ("upgrade_failed", "health"),
    ("upgrade_failed", "all"),
    ("site_mid_run", "none"),
    ("site_failed", "none"),
    ("site_finished", "none"),
]


def _status(name: str) -> dict:
    return cluster_status(snapshot(name), Settings())


@pytest.mark.parametrize("name, details", GOLDEN, ids=[f"{n}-{d}" for n, d in GOLDEN])
def test_report_matches_its_golden_file(name: str, details: str) -> None:
    path = FIXTURES / (f"{name}.report" if details == "none" else f"{name}.{details}.report")
    got = report(_status(name), details) + "\n"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(got)
    assert path.exists(), f"{path.name} is missing: run with UPDATE_GOLDEN=1 to write it"
    assert got == path.read_text()


def test_a_quiet_cluster_says_so_in_one_line() -> None:
    assert report(_status("quiet")) == "No service is updating."


def test_details_add_the_phase_table_the_descriptions_or_both() -> None:
    status = _status("upgrade_failed")
    plain, phases, health, full = (report(status, d) for d in ("none", "phases", "health", "all"))
    assert "TYPE            STATE" in phases and "TYPE" not in plain and "TYPE" not in health
    assert "Description:" in health and "Reference:" in health and "Description:" not in phases
    assert full.startswith(phases.split("= Update Health =")[0]) and full.endswith(health.split("= Update Health =")[1])
    assert "Last log line: db-sync: cannot connect to mariadb:3306" in health


def test_unknown_details_are_refused() -> None:
    with pytest.raises(ValueError, match="details must be one of none, phases, health, all"):
        report(_status("quiet"), "everything")


def test_times_are_relative_to_now_and_a_running_phase_keeps_counting() -> None:
    status = _status("upgrade_progressing")
    later = parse_time(status["observedAt"]) + timedelta(seconds=30)
    text = report(status, "none", later)
    assert "Duration:        1m15s (Est. Time Remaining: 20s)" in text
    assert "upgrade Running 1m10s" in text
    overdue = report(status, "none", later + timedelta(minutes=5))
    assert "(Est. Time Remaining: overdue)" in overdue


def test_the_health_table_orders_and_ages_the_insights() -> None:
    status = _status("upgrade_failed")
    lines = report(status).split("= Update Health =\n")[1].splitlines()
    assert lines[0].split() == ["SINCE", "LEVEL", "IMPACT", "MESSAGE"]
    assert lines[1].startswith("2m32s  Error  Update Stalled  Job keystone-db-sync failed")
    assert lines[2].startswith("2m30s  Error  Update Stalled  Phase keystone-upgrade-bbbb2222 (upgrade) failed")


def test_a_site_is_one_line_at_the_top() -> None:
    text = report(_status("site_mid_run"))
    assert text.splitlines()[0] == ("site example: 3/5 services done (60%), ETA 05:12:30Z; "
                                    "waiting: placement for keystone (Installing); failed: -")
    assert "Site:            example, level 2; waiting for keystone (Installing)" in text
    assert "Site:            example, level 1\n" in text
    assert report(_status("site_failed")).splitlines()[0] == (
        "site example: 3/5 services done (60%), ETA 05:13:21Z; waiting: -; failed: keystone, placement")


def test_a_site_past_its_estimate_is_overdue_and_a_finished_one_has_none() -> None:
    status = _status("site_mid_run")
    later = parse_time(status["observedAt"]) + timedelta(minutes=2)
    assert "ETA 05:12:30Z (overdue)" in report(status, "none", later).splitlines()[0]
    assert report(_status("site_finished")).split("\n\n") == [
        "site example: 5/5 services done (100%), ETA -; waiting: -; failed: -", "No service is updating."]


def test_waiting_services_are_told_apart() -> None:
    line = report({"sites": [{"name": "s", "services": 3, "done": 1, "completion": 33, "failed": ["a", "b"],
                              "waiting": [{"service": "x", "for": "a (Installing), b (Installing)"},
                                          {"service": "y", "for": "x (Planning)"}]}]}).splitlines()[0]
    assert line == ("site s: 1/3 services done (33%), ETA -; waiting: x for a (Installing), b (Installing) | "
                    "y for x (Planning); failed: a, b")


def test_a_site_waiting_on_many_names_the_first_three_and_counts_the_rest() -> None:
    waiting = [{"service": f"s{n}", "namespace": "openstack", "for": f"s{n - 10} (Testing)"} for n in range(20, 26)]
    site = {"name": "big", "services": 30, "done": 7, "completion": 23, "waiting": waiting, "failed": []}
    line = site_line(site, parse_time("2026-02-01T00:00:00Z"))
    assert "waiting: s20 for s10 (Testing) | s21 for s11 (Testing) | s22 for s12 (Testing) | 3 more;" in line
    assert "s23" not in line
