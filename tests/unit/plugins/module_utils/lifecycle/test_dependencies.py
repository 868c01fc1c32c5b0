"""plugins/module_utils/lifecycle/dependencies.py: what a depends_on element
names, and whether a ServiceLifecycle meets it."""

from __future__ import annotations

from typing import Any, Dict, Optional

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LifecycleError
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import parse_time
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.dependencies import (
    REMOVED, Dependency, dependents_of, judge, last_change, parse, parse_all,
)

SINCE = parse_time("2026-02-01T00:00:00Z")


@pytest.mark.parametrize("text, dep", [
    ("mariadb", Dependency("mariadb", "openstack", "", "mariadb")),
    ("keystone>=2025.1", Dependency("keystone", "openstack", "2025.1", "keystone")),
    (" keystone >= 2025.1 ", Dependency("keystone", "openstack", "2025.1", "keystone")),
    ("infra/mariadb>=10.6", Dependency("mariadb", "infra", "10.6", "infra/mariadb")),
    ("infra/mariadb", Dependency("mariadb", "infra", "", "infra/mariadb")),
    ("openstack/mariadb", Dependency("mariadb", "openstack", "", "mariadb")),  # its own namespace, named
])
def test_the_three_forms_and_a_namespace_alone(text: str, dep: Dependency) -> None:
    assert parse(text, "openstack") == dep


@pytest.mark.parametrize("text, why", [
    ("keystone>2025.1", "the only comparison is >="),
    ("keystone==2025.1", "the only comparison is >="),
    ("keystone>=", "a version follows >="),
    ("keystone>=2025 .1", "a version follows >=, without spaces"),
    ("Keystone", "'Keystone' is not a service name"),
    ("", "'' is not a service name"),
    ("infra/", "'' is not a service name"),
    ("in_fra/mariadb", "'in_fra' is not a namespace name"),
    ("a/b/c", "'a/b' is not a namespace name"),
])
def test_a_malformed_element_is_refused_naming_the_forms(text: str, why: str) -> None:
    with pytest.raises(LifecycleError) as err:
        parse(text, "openstack")
    assert str(err.value).startswith(f"depends_on: {text!r} is not name, name>=min_version or "
                                     "namespace/name>=min_version: ")
    assert why in str(err.value)


def test_a_service_cannot_wait_for_itself_but_for_its_namesake_elsewhere() -> None:
    with pytest.raises(LifecycleError, match="keystone cannot depend on itself"):
        parse_all(["mariadb", "keystone>=1"], "openstack", "keystone")
    assert [d.label for d in parse_all(["other/keystone"], "openstack", "keystone")] == ["other/keystone"]
    assert parse_all(None, "openstack", "keystone") == []


def _record(state: str = "", version: str = "", flow: Optional[Dict[str, Any]] = None,
            history: Optional[list] = None) -> Dict[str, Any]:
    status: Dict[str, Any] = {k: v for k, v in (("state", state), ("currentVersion", version)) if v}
    if flow:
        status["flow"] = flow
    if history:
        status["history"] = history
    return {"metadata": {"name": "dep"}, "status": status}


def _why(text: str, record: Optional[Dict[str, Any]], since=None) -> tuple:
    verdict = judge(parse(text, "openstack"), record, since)
    return verdict.met, verdict.lost, verdict.why


def test_operational_meets_a_dependency_at_or_above_its_minimum() -> None:
    assert _why("dep", _record("Operational")) == (True, False, "Operational")
    assert _why("dep>=2025.1", _record("Operational", "2025.2")) == (True, False, "Operational, version 2025.2")
    assert _why("dep>=1.9", _record("Operational", "1.10"))[0] is True


def test_not_met_says_what_it_is_instead() -> None:
    assert _why("dep", None) == (False, False, "no ServiceLifecycle in openstack")
    assert _why("infra/dep", None)[2] == "no ServiceLifecycle in infra"
    assert _why("dep", _record()) == (False, False, "no state")
    assert _why("dep", _record("Installing")) == (False, False, "Installing")
    assert _why("dep>=2025.2", _record("Operational", "2025.1")) == (
        False, False, "Operational, version 2025.1, needs >= 2025.2")
    assert _why("dep>=2025.2", _record("Upgrading")) == (False, False, "Upgrading, version unknown, needs >= 2025.2")


def test_a_minimum_is_met_when_the_flow_that_brought_it_has_ended() -> None:
    """An update is Operational at its new version from its traffic rollout on,
    while its test still runs: a dependent that asks for that version waits
    for the flow's end. Without a minimum the running flow does not matter."""
    testing = _record("Operational", "2026.1", flow={"name": "update", "state": "Running", "targetVersion": "2026.1"})
    assert _why("dep>=2026.1", testing) == (False, False, "Operational, version 2026.1, its update flow running")
    assert _why("dep", testing) == (True, False, "Operational, version 2026.1")
    ended = _record("Operational", "2026.1", flow={"name": "update", "state": "Succeeded", "targetVersion": "2026.1"})
    assert _why("dep>=2026.1", ended) == (True, False, "Operational, version 2026.1")


def test_an_update_rolled_back_in_this_run_is_lost_for_the_version_it_did_not_reach() -> None:
    rolled = _record("Operational", "2025.2", flow={
        "name": "update", "state": "RolledBack", "targetVersion": "2026.1", "completedAt": "2026-02-01T00:05:00Z",
        "message": "rolled back to revision 3 because the test phase failed"})
    assert _why("dep>=2026.1", rolled, SINCE) == (
        False, True, "its update to 2026.1 was rolled back in this run, it runs 2025.2: "
                     "rolled back to revision 3 because the test phase failed")
    # Before this run, or with no run to compare with: the update may be run again, so it is waited for.
    assert _why("dep>=2026.1", rolled)[:2] == (False, False)
    earlier = _record("Operational", "2025.2", flow=dict(rolled["status"]["flow"], completedAt="2026-01-15T00:00:00Z"))
    assert _why("dep>=2026.1", earlier, SINCE)[:2] == (False, False)
    # The version it runs is enough: met, whatever became of the update.
    assert _why("dep>=2025.2", rolled, SINCE)[:2] == (True, False)


def test_failed_or_removed_with_no_flow_running_is_lost_with_the_flows_message() -> None:
    failed = _record("Failed", flow={"name": "update", "state": "Failed", "completedAt": "2026-02-02T00:00:00Z",
                                     "message": "db-sync failed: exit 1"})
    assert _why("dep", failed) == (False, True, "Failed: db-sync failed: exit 1")
    assert _why("dep", _record("Removed")) == (False, True, "Removed")


def test_one_whose_flow_runs_again_is_waited_for() -> None:
    again = _record("Removed", flow={"name": "greenfield", "state": "Running", "startedAt": "2026-02-02T00:00:00Z"})
    assert _why("dep", again) == (False, False, "Removed, its greenfield flow running")


def test_since_waits_for_one_lost_before_it_and_not_for_one_lost_after() -> None:
    before = _record("Removed", flow={"name": "remove", "state": "Succeeded", "completedAt": "2026-01-15T00:00:00Z"})
    after = _record("Removed", flow={"name": "greenfield", "state": "Failed", "completedAt": "2026-02-01T00:05:00Z",
                                     "message": "removed because the test phase failed"})
    assert _why("dep", before, SINCE) == (False, False, "Removed before this run, not yet deployed again")
    assert _why("dep", after, SINCE) == (False, True, "Removed: removed because the test phase failed")
    assert _why("dep", before)[1] is True  # without since, any Removed is lost
    assert _why("dep", _record("Failed"), SINCE)[1] is False  # nothing says when: not this run's doing


def test_a_phase_outside_any_flow_after_since_counts_as_the_last_change() -> None:
    status = _record("Removed", flow={"name": "greenfield", "state": "Succeeded", "completedAt": "2026-01-10T00:00:00Z"},
                     history=[{"name": "dep-uninstall-1", "type": "uninstall", "completedAt": "2026-02-03T00:00:00Z"}])
    assert last_change(status["status"]) == parse_time("2026-02-03T00:00:00Z")
    assert _why("dep", status, SINCE)[1] is True
    assert last_change({}) is None


def _gave_up(reason: str, at: str, state: str = "", flow: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    record = _record(state, flow=flow)
    record["status"]["conditions"] = [{"type": "DependenciesReady", "status": "False", "reason": reason,
                                       "message": "keystone depends on mariadb, which is Failed",
                                       "lastTransitionTime": at}]
    return record


def test_one_whose_flow_gave_up_waiting_is_lost_so_the_failure_climbs_at_once() -> None:
    # keystone never started (mariadb failed): placement, waiting on keystone, gives up too.
    for reason in ("DependencyLost", "Timeout"):
        assert _why("dep", _gave_up(reason, "2026-02-01T00:05:00Z"), SINCE) == (
            False, True, "its flow did not start: keystone depends on mariadb, which is Failed")
    # Still waiting: not lost.
    assert _why("dep", _gave_up("Waiting", "2026-02-01T00:05:00Z"), SINCE)[1] is False
    # Given up before this run (the run may start it again), or started again since: waited for.
    assert _why("dep", _gave_up("Timeout", "2026-01-15T00:00:00Z"), SINCE)[1] is False
    running = _gave_up("Timeout", "2026-02-01T00:05:00Z", flow={"name": "greenfield", "state": "Running"})
    assert _why("dep", running, SINCE)[1] is False
    # Operational at the version asked: a give-up of an update does not matter.
    assert _why("dep", _gave_up("Timeout", "2026-02-01T00:05:00Z", state="Operational"), SINCE)[0] is True


def _removal(record: Optional[Dict[str, Any]], since=None) -> tuple:
    verdict = judge(Dependency("placement", "openstack", label="placement", want=REMOVED), record, since)
    return verdict.met, verdict.lost, verdict.why


def test_a_removal_waits_for_its_dependent_to_be_removed_and_gives_up_when_that_fails() -> None:
    assert _removal(None) == (True, False, "no ServiceLifecycle")
    assert _removal(_record("Removed")) == (True, False, "Removed")
    assert _removal(_record("Removing", flow={"name": "remove", "state": "Running"})) == (
        False, False, "Removing, its remove flow running")
    assert _removal(_record("Operational")) == (False, False, "Operational")
    failed = _record("Failed", flow={"name": "remove", "state": "Failed", "completedAt": "2026-02-01T00:05:00Z",
                                     "message": "uninstall failed"})
    assert _removal(failed, SINCE) == (False, True, "Failed: uninstall failed")
    # Failed before this run: the run may still remove it.
    earlier = _record("Failed", flow={"name": "update", "state": "Failed", "completedAt": "2026-01-05T00:00:00Z"})
    assert _removal(earlier, SINCE) == (False, False, "Failed")


def test_dependents_are_the_records_whose_depends_on_names_the_service() -> None:
    def rec(name: str, namespace: str, depends: list) -> Dict[str, Any]:
        return {"metadata": {"name": name, "namespace": namespace}, "spec": {"dependsOn": depends}}
    records = [rec("placement", "openstack", ["keystone>=2026.1", "mariadb"]), rec("glance", "openstack", ["keystone"]),
               rec("nova", "compute", ["openstack/keystone"]), rec("horizon", "compute", ["keystone"]),
               rec("odd", "openstack", ["not a name!"]), rec("memcached", "openstack", [])]
    assert [r["metadata"]["name"] for r in dependents_of(records, "keystone", "openstack")] == [
        "placement", "glance", "nova"]
