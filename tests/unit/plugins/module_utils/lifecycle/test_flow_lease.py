"""plugins/module_utils/lifecycle/flow_lease.py: one flow per service, by a Lease."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from support.fake_leases import Dyn as _Dyn
from support.fake_leases import Leases as _Leases

from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import flow_lease
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError

T0 = datetime(2026, 11, 23, 12, 0, 0, tzinfo=timezone.utc)


def _lease(leases: _Leases, holder: str) -> flow_lease.FlowLease:
    return flow_lease.FlowLease(_Dyn(leases), "openstack", "keystone", holder)


def test_the_first_flow_takes_the_lease_and_a_second_is_refused_naming_the_first() -> None:
    leases = _Leases()
    first = _lease(leases, "awx-1/100").acquire("update", now=T0)
    assert first.action == "acquired"
    spec = leases.items["lcm-flow-keystone"]["spec"]
    assert (spec["holderIdentity"], spec["leaseDurationSeconds"]) == ("awx-1/100", 60)
    with pytest.raises(KubeError) as err:
        _lease(leases, "laptop/200").acquire("update", now=T0 + timedelta(seconds=10))
    msg = str(err.value)
    assert "keystone is held by another update flow: awx-1/100, since 2026-11-23T12:00:00.000000Z" in msg
    assert "renewed 10s ago" in msg and "free 51s from now" in msg
    assert leases.items["lcm-flow-keystone"]["spec"]["holderIdentity"] == "awx-1/100"


def test_the_same_run_starting_again_renews() -> None:
    leases = _Leases()
    _lease(leases, "awx-1/100").acquire("greenfield", now=T0)
    again = _lease(leases, "awx-1/100").acquire("greenfield", now=T0 + timedelta(seconds=5))
    assert again.action == "renewed"
    assert leases.items["lcm-flow-keystone"]["spec"]["acquireTime"] == "2026-11-23T12:00:00.000000Z"


def test_a_released_lease_is_taken_by_the_next_flow() -> None:
    leases = _Leases()
    first = _lease(leases, "awx-1/100")
    first.acquire("update", now=T0)
    assert first.release() is True
    assert "holderIdentity" not in leases.items["lcm-flow-keystone"]["spec"]
    assert _lease(leases, "laptop/200").acquire("rollback", now=T0 + timedelta(seconds=1)).action == "acquired"
    assert first.release() is False  # not its lease any more


def test_an_expired_holder_is_taken_over_and_that_is_recorded() -> None:
    leases = _Leases()
    _lease(leases, "host-gone/100").acquire("update", now=T0)
    took = _lease(leases, "awx-2/300").acquire("rollback", now=T0 + timedelta(seconds=61))
    assert took.action == "took-over" and "taken over from host-gone/100" in took.message
    lease = leases.items["lcm-flow-keystone"]
    assert lease["spec"]["holderIdentity"] == "awx-2/300" and lease["spec"]["leaseTransitions"] == 1
    assert lease["metadata"]["annotations"]["lifecycle.openstack.org/taken-over-from"].startswith(
        "host-gone/100 (update flow), not renewed since 2026-11-23T12:00:00")


def test_two_runs_taking_a_free_lease_at_once_cannot_both_win() -> None:
    leases = _Leases()
    other = flow_lease.FlowLease(_Dyn(leases), "openstack", "keystone", "other/1")._body(  # pylint: disable=protected-access
        "update", T0, T0, 0)
    leases.race = other  # the other run's create lands first
    with pytest.raises(KubeError, match="held by another update flow: other/1"):
        _lease(leases, "me/2").acquire("update", now=T0)
    # And on a replace (taking over a released lease): the resourceVersion decides.
    free = _Leases()
    mine = _lease(free, "a/1")
    mine.acquire("update", now=T0)
    mine.release()
    free.race = dict(free.items["lcm-flow-keystone"], spec={"holderIdentity": "b/2",
                                                            "acquireTime": "2026-11-23T12:00:01.000000Z",
                                                            "renewTime": "2026-11-23T12:00:01.000000Z"})
    # The loser names the winner, as a run that came a moment later would.
    with pytest.raises(KubeError, match=r"held by another update flow: b/2, since 2026-11-23T12:00:01.000000Z"):
        _lease(free, "c/3").acquire("update", now=T0 + timedelta(seconds=2))


def test_renew_stops_once_the_lease_is_someone_elses() -> None:
    leases = _Leases()
    mine = _lease(leases, "a/1")
    mine.acquire("update", now=T0)
    assert mine.renew() is True
    leases.items["lcm-flow-keystone"]["spec"]["holderIdentity"] = "b/2"
    assert mine.renew() is False
