"""plugins/module_utils/lifecycle/flow_end.py: a flow's end, whichever module
ends it - the record, the flow's Lease given back, one refresh of the
UpdateStatus for the end and for what the same process changed before it."""

from __future__ import annotations

import copy
from typing import Any, Callable, Dict, List, Optional

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LifecycleError
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import flow_end
from support.paths import UNIT_FIXTURES

RECORD = UNIT_FIXTURES / "flow" / "greenfield_rolled_out.yaml"


class _Lifecycle:
    """keystone's ServiceLifecycle, in memory: what runner.run reads and writes."""

    def __init__(self, record: Optional[Dict[str, Any]]) -> None:
        self.dyn, self.res = object(), object()
        self.record = record
        self.writes = 0

    def get(self) -> Optional[Dict[str, Any]]:
        return copy.deepcopy(self.record)

    def ensure(self, depends_on: Any = None, site: Any = None) -> Dict[str, Any]:
        raise AssertionError("an end writes the record's status only")

    def update(self, change: Callable[[Dict[str, Any]], None], dry_run: bool = False) -> bool:
        status = copy.deepcopy((self.record or {}).get("status") or {})
        change(status)
        if status == (self.record or {}).get("status") or dry_run:
            return status != (self.record or {}).get("status")
        self.record["status"] = status  # type: ignore[index]
        self.writes += 1
        return True


class _Lease:
    def __init__(self, held: bool) -> None:
        self.held = held
        self.released = 0

    def release(self) -> bool:
        self.released += 1
        held, self.held = self.held, False
        return held


class _Cluster:
    """What an end touches: the record, the Lease (held by this run or not), the UpdateStatus."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.lifecycle = _Lifecycle(yaml.safe_load(RECORD.read_text()))
        self.lease = _Lease(held=True)
        self.refreshes: List[str] = []
        self.refresh_answer = ""
        monkeypatch.setattr(flow_end, "Lifecycle", lambda dyn, namespace, service, release: self.lifecycle)
        monkeypatch.setattr(flow_end.flow_lease, "holder_identity", lambda: "host/1")
        monkeypatch.setattr(flow_end.flow_lease, "FlowLease", self._lease)
        monkeypatch.setattr(flow_end, "refresh", self._refresh)

    def _lease(self, dyn: Any, namespace: str, service: str, holder: str) -> _Lease:
        assert (namespace, service, holder) == ("openstack", "keystone", "host/1")
        return self.lease

    def _refresh(self, dyn: Any) -> str:
        self.refreshes.append("refresh")
        return self.refresh_answer

    def flow(self) -> Dict[str, Any]:
        return self.lifecycle.record["status"]["flow"]  # type: ignore[index]


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> _Cluster:
    return _Cluster(monkeypatch)


def _end(check_mode: bool = False, warnings: Optional[List[str]] = None, **given: Any) -> Dict[str, Any]:
    req = flow_end.request("keystone", "keystone", "openstack", **dict({"name": "greenfield"}, **given))
    return flow_end.end(object(), req, check_mode, [] if warnings is None else warnings)


def test_the_end_records_the_flow_releases_its_lease_and_refreshes_once(cluster: _Cluster) -> None:
    result = _end()
    assert result["changed"] is True and result["lease"] == "released"
    assert cluster.flow()["state"] == "Succeeded" and cluster.flow()["completedAt"]
    assert cluster.lifecycle.record["status"]["state"] == "Operational"  # type: ignore[index]
    assert cluster.lifecycle.writes == 1 and cluster.refreshes == ["refresh"]
    assert result["lifecycle"]["flow"]["state"] == "Succeeded" and result["lifecycle"]["state"] == "Operational"
    assert result["report"].splitlines()[0] == \
        "keystone (openstack): greenfield flow Succeeded, version 2025.1; service Operational"


def test_a_request_takes_the_defaults_of_a_successful_flow_and_the_reason_as_its_message() -> None:
    req = flow_end.request("keystone", "keystone", "openstack", "rollback", reason="rolled back to revision 2")
    assert (req.flow, req.flow_action, req.result, req.lifecycle_state, req.message) == (
        "rollback", "end", "Succeeded", "Operational", "rolled back to revision 2")
    req = flow_end.request("keystone", "keystone", "openstack", "remove", result="Succeeded", lifecycle_state="Removed")
    assert (req.lifecycle_state, req.message) == ("Removed", "")


def test_a_flow_ended_already_changes_nothing_and_is_no_error(cluster: _Cluster) -> None:
    _end()
    cluster.refreshes.clear()
    again = _end()  # a re-run interrupted after the end: its own start took the Lease again
    assert again["changed"] is False and again["lease"] == "not held by this run"
    assert cluster.lifecycle.writes == 1 and cluster.refreshes == [] and cluster.lease.released == 2


def test_a_change_made_before_in_the_same_process_is_refreshed_with_the_end(cluster: _Cluster) -> None:
    _end()
    cluster.refreshes.clear()
    req = flow_end.request("keystone", "keystone", "openstack", "greenfield")
    result = flow_end.end(object(), req, False, [], changed_before=True)
    assert result["changed"] is False and cluster.refreshes == ["refresh"]


def test_check_mode_writes_nothing_keeps_the_lease_and_says_what_the_record_would_be(cluster: _Cluster) -> None:
    result = _end(check_mode=True)
    assert result["changed"] is True and "lease" not in result
    assert result["lifecycle"]["flow"]["state"] == "Succeeded"
    assert cluster.flow()["state"] == "Running" and cluster.lifecycle.writes == 0
    assert cluster.lease.released == 0 and cluster.refreshes == []


def test_an_end_that_fails_keeps_the_lease_and_still_refreshes_what_changed_before(cluster: _Cluster) -> None:
    cluster.flow()["name"] = "update"  # this run's greenfield was never started
    req = flow_end.request("keystone", "keystone", "openstack", "greenfield")
    with pytest.raises(LifecycleError, match="no greenfield flow was started for this service"):
        flow_end.end(object(), req, False, [], changed_before=True)
    assert cluster.lease.released == 0 and cluster.refreshes == ["refresh"]


def test_a_refresh_that_failed_is_a_warning(cluster: _Cluster) -> None:
    cluster.refresh_answer = "the UpdateStatus was not refreshed: 403"
    warnings: List[str] = []
    assert _end(warnings=warnings)["changed"] is True
    assert warnings == ["the UpdateStatus was not refreshed: 403"]
