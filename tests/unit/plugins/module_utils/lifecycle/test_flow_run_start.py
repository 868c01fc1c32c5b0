"""plugins/module_utils/lifecycle/flow_run.py (start): a flow's start - the namespace
made before the Lease, the Lease taken before the record, its renewer left
behind, the Lease given back when the start fails - and the UpdateStatus
refreshed after any change to the record."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.kube import namespace_ensure
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import flow_run as flow_start
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.flow import LifecycleRequest

TAKEN = "keystone: flow lease lcm-flow-keystone taken by host/1"


class _Taken:
    def __init__(self, action: str, message: str) -> None:
        self.action, self.message = action, message


class _Lease:
    """The flow Lease as a start uses it; every call lands in the cluster's `calls`."""

    def __init__(self, cluster: "_Cluster") -> None:
        self.cluster = cluster

    def acquire(self, purpose: str) -> _Taken:
        self.cluster.calls.append(f"acquire {purpose}")
        return _Taken(self.cluster.lease_action, TAKEN)

    def release(self) -> bool:
        self.cluster.calls.append("release")
        if self.cluster.release_races:
            self.cluster.release_races -= 1
            raise PhaseError("another run changed the flow lease lcm-flow-keystone at the same moment")
        return True


class _Cluster:
    """What a start touches, in the order it touches it (`calls`)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: List[str] = []
        self.namespace = namespace_ensure.PRESENT
        self.lease_action = "acquired"
        self.release_races = 0
        self.run_fails: Optional[str] = None
        self.changed = True
        self.refresh_answer = ""
        self.req: Optional[LifecycleRequest] = None
        self.lease = _Lease(self)
        monkeypatch.setattr(flow_start.flow_lease, "holder_identity", lambda: "host/1")
        monkeypatch.setattr(flow_start.flow_lease, "FlowLease", self._flow_lease)
        monkeypatch.setattr(flow_start.lease_renewer, "keep_renewed", self._keep_renewed)
        monkeypatch.setattr(flow_start.namespace_ensure, "ensure", self._ensure)
        monkeypatch.setattr(flow_start, "Lifecycle", lambda dyn, namespace, service, release: (namespace, service))
        monkeypatch.setattr(flow_start.runner, "run", self._run)
        monkeypatch.setattr(flow_start, "refresh", self._refresh)

    def _flow_lease(self, dyn: Any, namespace: str, service: str, holder: str) -> _Lease:
        assert (namespace, service, holder) == ("openstack", "keystone", "host/1")
        return self.lease

    def _keep_renewed(self, dyn: Any, lease: Any) -> None:
        assert lease is self.lease
        self.calls.append("renewer")

    def _ensure(self, dyn: Any, namespace: str, dry_run: bool) -> str:
        self.calls.append(f"namespace {namespace}" + (" (dry run)" if dry_run else ""))
        return self.namespace

    def _run(self, lifecycle: Any, req: LifecycleRequest, check_mode: bool) -> Dict[str, Any]:
        assert lifecycle == ("openstack", "keystone")
        self.calls.append("run")
        self.req = req
        if self.run_fails:
            raise PhaseError(self.run_fails)
        return {"changed": self.changed, "lifecycle": {}, "report": "", "diff": {}}

    def _refresh(self, dyn: Any) -> str:
        self.calls.append("refresh")
        return self.refresh_answer


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> _Cluster:
    return _Cluster(monkeypatch)


def _req(action: Optional[str] = "start", **given: Any) -> LifecycleRequest:
    return LifecycleRequest(service="keystone", release="keystone", namespace="openstack",
                            flow="greenfield" if action else None, flow_action=action, **given)


def _start(req: LifecycleRequest, check_mode: bool = False, warnings: Optional[List[str]] = None,
           create_namespace: bool = False) -> Dict[str, Any]:
    return flow_start.start(object(), req, check_mode, [] if warnings is None else warnings, create_namespace)


def test_a_start_that_does_not_wait_takes_the_lease_then_leaves_the_renewer_once_started(cluster: _Cluster) -> None:
    out = _start(_req())
    assert cluster.calls == ["acquire greenfield", "run", "renewer", "refresh"]
    assert out["lease"] == TAKEN and out["changed"] is True and "namespace" not in out


def test_a_start_that_may_wait_keeps_its_lease_renewed_from_before_the_wait(cluster: _Cluster) -> None:
    out = _start(_req(dependency_timeout=600))
    assert cluster.calls == ["acquire greenfield", "renewer", "run", "refresh"]
    assert out["lease"] == TAKEN


def test_a_start_that_waits_for_no_dependency_leaves_the_renewer_after_the_record(cluster: _Cluster) -> None:
    _start(_req(dependency_timeout=600, require_dependencies=False))
    assert cluster.calls == ["acquire greenfield", "run", "renewer", "refresh"]


def test_a_start_that_fails_gives_the_lease_back_and_changes_nothing_more(cluster: _Cluster) -> None:
    cluster.run_fails = "keystone depends on mariadb (Removed)"
    with pytest.raises(PhaseError, match=r"keystone depends on mariadb \(Removed\)"):
        _start(_req())
    assert cluster.calls == ["acquire greenfield", "run", "release"]


def test_a_wait_that_fails_gives_the_lease_back_even_racing_its_renewer(cluster: _Cluster) -> None:
    cluster.run_fails = "keystone depends on mariadb (Removed)"
    cluster.release_races = 1
    with pytest.raises(PhaseError, match="mariadb"):
        _start(_req(dependency_timeout=600))
    assert cluster.calls == ["acquire greenfield", "renewer", "run", "release", "release"]


def test_the_namespace_is_made_before_the_lease_that_lives_in_it_and_is_a_change(cluster: _Cluster) -> None:
    cluster.namespace = namespace_ensure.CREATED
    cluster.changed = False
    out = _start(_req(), create_namespace=True)
    assert cluster.calls == ["namespace openstack", "acquire greenfield", "run", "renewer", "refresh"]
    assert out["namespace"] == namespace_ensure.CREATED and out["changed"] is True


def test_a_namespace_there_already_is_said_and_changes_nothing(cluster: _Cluster) -> None:
    cluster.changed = False
    out = _start(_req(), create_namespace=True)
    assert out["namespace"] == namespace_ensure.PRESENT and out["changed"] is False
    assert "refresh" not in cluster.calls


def test_a_lease_taken_over_is_handed_to_the_record(cluster: _Cluster) -> None:
    cluster.lease_action = "took-over"
    _start(_req())
    assert cluster.req is not None and cluster.req.took_over == TAKEN


def test_check_mode_takes_no_lease_refreshes_nothing_and_only_reads_the_namespace(cluster: _Cluster) -> None:
    out = _start(_req(dependency_timeout=600), check_mode=True, create_namespace=True)
    assert cluster.calls == ["namespace openstack (dry run)", "run"]
    assert "lease" not in out and out["changed"] is True


def test_a_record_set_outside_a_flow_takes_no_lease_nor_namespace_and_is_refreshed(cluster: _Cluster) -> None:
    _start(_req(action=None, lifecycle_state="Removed"), create_namespace=True)
    assert cluster.calls == ["run", "refresh"]


def test_a_run_that_changed_nothing_refreshes_nothing(cluster: _Cluster) -> None:
    cluster.changed = False
    _start(_req(action=None, lifecycle_state="Removed"))
    assert cluster.calls == ["run"]


def test_a_refresh_that_failed_is_a_warning(cluster: _Cluster) -> None:
    cluster.refresh_answer = "the UpdateStatus was not refreshed: 403"
    warnings: List[str] = []
    assert _start(_req(), warnings=warnings)["changed"] is True
    assert warnings == ["the UpdateStatus was not refreshed: 403"]
