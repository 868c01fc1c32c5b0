"""plugins/module_utils/lifecycle/service_hold.py: a phase run outside any flow holds its
service for its playbook run, as a flow does (when a holder is gone: kube/test_lease.py)."""

from __future__ import annotations

import socket
import subprocess
import sys
from typing import Any, List

import pytest
from support.fake_leases import Dyn, Leases

from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import lease_renewer
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import service_hold
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.flow_lease import FlowLease


@pytest.fixture
def renewers(monkeypatch: pytest.MonkeyPatch) -> List[Any]:
    """The renewers left behind, instead of processes."""
    left: List[Any] = []
    monkeypatch.setattr(lease_renewer, "keep_renewed", lambda dyn, held: left.append(held))
    return left


def _as(monkeypatch: pytest.MonkeyPatch, holder: str) -> None:
    monkeypatch.setattr(service_hold, "holder_identity", lambda: holder)


def test_a_phase_outside_any_flow_takes_the_service_and_leaves_it_renewed(monkeypatch, renewers) -> None:
    leases = Leases()
    _as(monkeypatch, "awx-1/100")
    said = service_hold.hold(Dyn(leases), "openstack", "keystone", "install phase")
    assert said == "keystone: flow lease lcm-flow-keystone taken by awx-1/100"
    held = leases.items["lcm-flow-keystone"]
    assert held["spec"]["holderIdentity"] == "awx-1/100"
    assert held["metadata"]["annotations"]["lifecycle.openstack.org/flow"] == "install phase"
    assert [r.holder for r in renewers] == ["awx-1/100"]


def test_inside_its_own_flow_nothing_is_taken_and_the_flow_stays_named(monkeypatch, renewers) -> None:
    leases = Leases()
    FlowLease(Dyn(leases), "openstack", "keystone", "awx-1/100").acquire("update")
    before = dict(leases.items["lcm-flow-keystone"])
    _as(monkeypatch, "awx-1/100")
    assert service_hold.hold(Dyn(leases), "openstack", "keystone", "upgrade phase") == ""
    assert leases.items["lcm-flow-keystone"] == before and renewers == []


def test_another_runs_flow_or_phase_refuses_it(monkeypatch, renewers) -> None:
    leases = Leases()
    FlowLease(Dyn(leases), "openstack", "keystone", "awx-1/100").acquire("test phase")
    _as(monkeypatch, "laptop/200")
    with pytest.raises(KubeError) as err:
        service_hold.hold(Dyn(leases), "openstack", "keystone", "install phase")
    assert str(err.value).startswith("keystone is held by another test phase: awx-1/100, since ")
    assert "One run at a time per service" in str(err.value) and renewers == []


def test_a_holder_on_this_host_whose_process_ended_is_gone_at_once(monkeypatch, renewers) -> None:
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                           text=True, check=True)
    gone = f"{socket.gethostname()}/{ended.stdout.strip()}"
    leases = Leases()
    FlowLease(Dyn(leases), "openstack", "keystone", gone).acquire("install phase")
    _as(monkeypatch, "laptop/200")
    said = service_hold.hold(Dyn(leases), "openstack", "keystone", "install phase")
    assert said.startswith(f"keystone: flow lease lcm-flow-keystone taken over from {gone}")


def test_the_lease_is_read_once_to_decide_and_to_take_it(monkeypatch, renewers) -> None:
    """What says whether this run holds it already is what the take starts from."""
    leases = Leases()
    _as(monkeypatch, "awx-1/100")
    service_hold.hold(Dyn(leases), "openstack", "keystone", "install phase")
    assert leases.reads == 1 and leases.items["lcm-flow-keystone"]["spec"]["holderIdentity"] == "awx-1/100"
    leases.reads = 0
    assert service_hold.hold(Dyn(leases), "openstack", "keystone", "test phase") == ""  # held already
    assert leases.reads == 1


def test_a_lease_changed_after_it_was_read_is_read_again_before_it_is_taken(monkeypatch, renewers) -> None:
    """The read passed along is not trusted for the write: the replace holds
    only on its resourceVersion, and a run that took it meanwhile is named."""
    leases, other = Leases(), Leases()
    FlowLease(Dyn(leases), "openstack", "keystone", "awx-1/100").acquire("test phase")
    FlowLease(Dyn(leases), "openstack", "keystone", "awx-1/100").release()
    FlowLease(Dyn(other), "openstack", "keystone", "laptop/300").acquire("upgrade phase")
    leases.race = other.items["lcm-flow-keystone"]  # taken between our read and our write
    leases.reads = 0
    _as(monkeypatch, "laptop/200")
    with pytest.raises(KubeError) as err:
        service_hold.hold(Dyn(leases), "openstack", "keystone", "install phase")
    assert str(err.value).startswith("keystone is held by another upgrade phase: laptop/300, since ")
    assert leases.reads == 2 and renewers == []  # the read that decided, and the one after the conflict
