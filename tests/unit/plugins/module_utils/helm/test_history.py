"""release_history: reading a Helm release's history. Cases of the revision a
rollback returns to in fixtures/release_history/previous_deployed.yaml."""

from __future__ import annotations


import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.helm import history as release_history
from support.paths import UNIT_FIXTURES

CASES = yaml.safe_load((UNIT_FIXTURES / "release_history" / "previous_deployed.yaml").read_text())


def _history(rows):
    return [{"revision": r, "status": s, "description": d} for r, s, d in rows]


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_previous_deployed(case) -> None:
    assert release_history.previous_deployed(_history(case["history"])) == case["previous"]


@pytest.mark.parametrize("description, source", [
    ("Rollback to 2", 2), ("Rollback to 12 by lcm", 12), ("Rollback to x", None), ("Upgrade complete", None),
])
def test_rollback_source(description: str, source) -> None:
    assert release_history.rollback_source({"description": description}) == source


def test_a_release_left_pending_names_the_command_that_clears_it() -> None:
    upgrading = _history([[1, "superseded", "Install complete"], [2, "pending-upgrade", "Preparing upgrade"]])
    assert release_history.stuck("keystone", "openstack", upgrading) == (
        "release keystone is pending-upgrade at revision 2: an earlier operation did not finish (or is still "
        "running). Nothing was changed. Once no other operation runs on it, clear it with "
        "`helm rollback keystone 1 -n openstack`, then run again")
    installing = _history([[1, "pending-install", "Initial install underway"]])
    assert "clear it with `helm uninstall keystone -n openstack`" in release_history.stuck(
        "keystone", "openstack", installing)
    assert release_history.stuck("keystone", "openstack", upgrading[:1]) == ""


SUMMARY_HISTORY = [
    {"revision": 1, "status": "superseded", "chart": "svc-0.1.0", "app_version": "1", "description": "Install complete"},
    {"revision": 2, "status": "deployed", "chart": "svc-0.2.0", "app_version": "2", "description": "Upgrade complete"},
]


def test_summary_is_the_last_revision() -> None:
    assert release_history.summary("svc", "ns", SUMMARY_HISTORY)["revision"] == 2
    assert release_history.summary("svc", "ns", []) == {}
