"""The flow record on a ServiceLifecycle: start, resume, end, and its summary."""

from __future__ import annotations

import copy

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import flow
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LcmError, LifecycleError
from support.paths import UNIT_FIXTURES

FIXTURES = UNIT_FIXTURES / "flow"


def _record() -> dict:
    return yaml.safe_load((FIXTURES / "update_rolled_back.yaml").read_text())


def _req(**kw) -> flow.LifecycleRequest:
    base = dict(service="keystone", release="keystone", namespace="openstack", flow="update",
                flow_action="start", planned=["trafficdrain", "upgrade", "test", "trafficrollout"],
                target_version="2025.3", from_revision=4)
    base.update(kw)
    return flow.LifecycleRequest(**base)


def test_the_report_is_one_row_per_phase_of_the_flow_in_order() -> None:
    assert flow.report(_record()) == (FIXTURES / "update_rolled_back.report").read_text().rstrip("\n")


def test_rows_join_the_flow_phases_with_the_history() -> None:
    rows = flow.rows(_record())
    assert [(r["phase"], r["result"]) for r in rows][2:4] == [("test", "Failed"), ("rollback", "Succeeded")]
    assert rows[3]["duration_seconds"] == 64
    assert "keystone-install-a1627a62" not in [r["name"] for r in rows]  # history outside the flow


def test_a_new_flow_starts_from_the_current_version() -> None:
    status = _record()["status"]
    flow.start(status, _req(), "2026-11-22T05:00:00Z")
    new = status["flow"]
    assert (new["name"], new["state"], new["fromVersion"], new["targetVersion"], new["fromRevision"]) == (
        "update", "Running", "2025.1", "2025.3", 4)
    assert new["phases"] == [] and new["startedAt"] == "2026-11-22T05:00:00Z"


def test_an_interrupted_flow_is_continued_not_restarted() -> None:
    status = _record()["status"]
    flow.start(status, _req(), "2026-11-22T05:00:00Z")
    status["flow"]["phases"].append("keystone-trafficdrain-aaaa")
    before = copy.deepcopy(status["flow"])
    flow.start(status, _req(from_revision=5), "2026-11-22T05:09:00Z")  # the re-run
    assert status["flow"] == before  # same start, same phases, same revision to return to


@pytest.mark.parametrize("change", [{"target_version": "2025.4"}, {"flow": "rollback"}])
def test_another_flow_or_target_starts_a_new_record(change: dict) -> None:
    status = _record()["status"]
    flow.start(status, _req(), "2026-11-22T05:00:00Z")
    flow.start(status, _req(**change), "2026-11-22T05:09:00Z")
    assert status["flow"]["startedAt"] == "2026-11-22T05:09:00Z"


def test_ending_a_flow_that_was_not_started_is_an_error_outside_check_mode() -> None:
    status = _record()["status"]
    req = _req(flow="remove", flow_action="end", result="Succeeded")
    with pytest.raises(LifecycleError, match="no remove flow was started"):
        flow.end(status, req, "2026-11-22T05:00:00Z")
    flow.end(status, req, "2026-11-22T05:00:00Z", strict=False)
    assert status["flow"]["name"] == "update"


def test_ending_records_the_result_and_message() -> None:
    status = _record()["status"]
    flow.start(status, _req(), "2026-11-22T05:00:00Z")
    flow.end(status, _req(flow_action="end", result="Succeeded", message=""), "2026-11-22T05:10:00Z")
    assert (status["flow"]["state"], status["flow"]["completedAt"]) == ("Succeeded", "2026-11-22T05:10:00Z")


@pytest.mark.parametrize("kw, error", [
    ({"flow": "deploy"}, "flow.name must be one of"),
    ({"flow_action": "end", "result": None}, "flow.result must be one of"),
    ({"lifecycle_state": "Broken"}, "lifecycle_state must be one of"),
])
def test_bad_requests_name_the_fix(kw: dict, error: str) -> None:
    with pytest.raises(LcmError, match=error):
        _req(**kw).validate()


def test_summary_uses_snake_case_and_lists_the_flow_phases() -> None:
    out = flow.summary(_record())
    assert (out["state"], out["current_version"], out["previous_version"]) == ("Operational", "2025.1", "2025.2")
    assert out["flow"]["from_revision"] == 2 and len(out["flow"]["phases"]) == 6


@pytest.mark.parametrize("status, line", [
    ({}, "keystone (openstack): no flow recorded yet; service unknown"),
    ({"state": "Removed", "currentVersion": "2025.1"},
     "keystone (openstack): no flow recorded yet; service Removed, version 2025.1"),
])
def test_a_record_without_a_flow_says_so(status: dict, line: str) -> None:
    record = {"metadata": {"name": "keystone", "namespace": "openstack"}, "spec": {"service": "keystone"},
              "status": status}
    assert flow.report(record) == line


def _failed_greenfield(undone: str = "") -> dict:
    """A greenfield whose last step failed; `undone` names a phase type that ran
    in it to undo the work (the rescue's uninstall)."""
    status = {"state": "Failed", "history": [
        {"name": "keystone-install-1", "type": "install", "result": "Succeeded"},
        {"name": "keystone-test-1", "type": "test", "result": "Succeeded"}],
        "flow": {"name": "greenfield", "state": "Failed", "startedAt": "2026-11-22T05:00:00Z",
                 "completedAt": "2026-11-22T05:04:00Z", "targetVersion": "2025.1", "message": "traffic failed",
                 "phases": ["keystone-install-1", "keystone-test-1"]}}
    if undone:
        status["history"].append({"name": f"keystone-{undone}-1", "type": undone, "result": "Succeeded"})
        status["flow"]["phases"].append(f"keystone-{undone}-1")
    return status


def test_a_failed_flow_that_undid_nothing_goes_on_from_the_failed_step() -> None:
    status = _failed_greenfield()
    req = _req(flow="greenfield", target_version="2025.1", planned=["install", "test", "trafficrollout"])
    flow.start(status, req, "2026-11-22T06:00:00Z")
    again = status["flow"]
    # Same record (its Phases keep their flow, so the done ones are skipped), running again.
    assert (again["state"], again["startedAt"], again["message"]) == ("Running", "2026-11-22T05:00:00Z", "")
    assert "completedAt" not in again and again["phases"] == ["keystone-install-1", "keystone-test-1"]


@pytest.mark.parametrize("status", [
    _failed_greenfield("uninstall"),  # the rescue removed the service
    dict(_failed_greenfield(), state="Removed"),
    dict(_failed_greenfield(), flow=dict(_failed_greenfield()["flow"], state="RolledBack")),
    dict(_failed_greenfield(), flow=dict(_failed_greenfield()["flow"], targetVersion="2025.2")),
], ids=["uninstalled", "removed", "rolled-back", "another-version"])
def test_a_flow_that_undid_its_work_or_ended_otherwise_starts_anew(status: dict) -> None:
    req = _req(flow="greenfield", target_version="2025.1", planned=["install", "test"])
    flow.start(status, req, "2026-11-22T06:00:00Z")
    assert status["flow"]["startedAt"] == "2026-11-22T06:00:00Z" and status["flow"]["phases"] == []


# -- steps a flow does not take -----------------------------------------------------------------

def test_a_skipped_step_is_a_row_where_it_stood_and_says_why() -> None:
    record = yaml.safe_load((FIXTURES / "remove_node_agent.yaml").read_text())
    assert flow.report(record) == (FIXTURES / "remove_node_agent.report").read_text().rstrip("\n")
    summary = flow.summary(record)["flow"]
    assert summary["skipped"] == [{"phase": "trafficdrain",
                                   "reason": "release openvswitch renders no Service: nothing to route"}]
    assert [r["phase"] for r in summary["phases"]] == ["uninstall"]  # the Phases only, as before


def test_a_step_skipped_while_the_flow_runs_stands_after_the_phases_it_ran() -> None:
    status = yaml.safe_load((FIXTURES / "greenfield_rolled_out.yaml").read_text())["status"]
    reason = "release openvswitch renders no Service: nothing to route"
    flow.skip(status, "trafficrollout", reason)
    flow.skip(status, "trafficrollout", reason)  # a re-run of the step adds nothing
    assert status["flow"]["skipped"] == [{"phase": "trafficrollout", "reason": reason, "after": 2}]
    record = {"metadata": {"name": "keystone", "namespace": "openstack"}, "spec": {"service": "keystone"},
              "status": status}
    assert [(r["phase"], r["result"]) for r in flow.with_skipped(record)] == [
        ("install", "Succeeded"), ("test", "Succeeded"), ("trafficrollout", "Skipped")]
    assert flow.report(record).endswith(f"trafficrollout skipped: {reason}")


def test_no_skip_is_noted_without_a_running_flow() -> None:
    status = _record()["status"]  # its update flow ended RolledBack
    before = copy.deepcopy(status)
    flow.skip(status, "trafficdrain", "nothing to route")
    assert status == before


@pytest.mark.parametrize("name, planned, kept, skipped", [
    ("greenfield", ["install", "test", "trafficrollout"], ["install", "test"], [("trafficrollout", 2)]),
    ("update", ["trafficdrain", "upgrade", "trafficrollout", "test"], ["upgrade", "test"],
     [("trafficdrain", 0), ("trafficrollout", 1)]),
    ("remove", ["trafficdrain", "uninstall"], ["uninstall"], [("trafficdrain", 0)]),
])
def test_a_flow_without_traffic_plans_no_traffic_step_and_records_each_skipped(
        name: str, planned: list, kept: list, skipped: list) -> None:
    status = _record()["status"]
    req = _req(flow=name, planned=planned, traffic_skipped="traffic_backend none")
    flow.start(status, req, "2026-11-22T05:00:00Z")
    assert status["flow"]["planned"] == kept
    assert [(e["phase"], e["after"]) for e in status["flow"]["skipped"]] == skipped
    assert {e["reason"] for e in status["flow"]["skipped"]} == {"traffic_backend none"}
    flow.start(status, req, "2026-11-22T05:09:00Z")  # the re-run continues the record: no second entry
    assert len(status["flow"]["skipped"]) == len(skipped)


def test_a_flow_with_traffic_records_nothing_skipped() -> None:
    status = _record()["status"]
    flow.start(status, _req(), "2026-11-22T05:00:00Z")
    assert "skipped" not in status["flow"]
    assert status["flow"]["planned"] == ["trafficdrain", "upgrade", "test", "trafficrollout"]
