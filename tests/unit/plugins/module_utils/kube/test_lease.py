"""plugins/module_utils/kube/lease.py: one Lease taken, renewed, refused
while another holder renews it, taken over once it stops, given back; every
write on the resourceVersion read, so two runs cannot both win."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from kubernetes.dynamic.exceptions import NotFoundError

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.lease import (
    ANNOTATION_TAKEN_OVER, Lease, LeaseNamespaceMissing, micro,
)
from support.fake_leases import Dyn, Leases, error

NOW = datetime(2026, 11, 24, 3, 0, tzinfo=timezone.utc)
ME, OTHER = "awx-job-41@runner-a", "awx-job-42@runner-b"


def _lease(leases: Leases, holder: str = ME, duration: int = 60) -> Lease:
    return Lease(Dyn(leases), "openstack", "lcm-keystone", holder, duration=duration)


def test_a_free_lease_is_taken_with_its_purpose_and_renewed_by_its_holder() -> None:
    leases = Leases()
    assert _lease(leases).acquire("the update flow", NOW).action == "acquired"
    stored = leases.items["lcm-keystone"]
    assert stored["spec"]["holderIdentity"] == ME and stored["spec"]["leaseTransitions"] == 0
    assert stored["metadata"]["annotations"]["lifecycle.openstack.org/purpose"] == "the update flow"
    again = _lease(leases).acquire("the update flow", NOW + timedelta(seconds=10))
    assert again.action == "renewed" and again.message == f"Lease lcm-keystone renewed by {ME}"
    assert leases.items["lcm-keystone"]["spec"]["acquireTime"] == micro(NOW)  # held since the first take


def test_a_live_holder_refuses_naming_itself_its_purpose_and_when_it_is_free() -> None:
    leases = Leases()
    _lease(leases, OTHER).acquire("the greenfield flow", NOW)
    with pytest.raises(PhaseError) as err:
        _lease(leases).acquire("the update flow", NOW + timedelta(seconds=20))
    assert str(err.value) == (f"Lease lcm-keystone in openstack is held by {OTHER} (the greenfield flow), "
                              f"since {micro(NOW)}; it is free 41s from now unless renewed")
    assert leases.items["lcm-keystone"]["spec"]["holderIdentity"] == OTHER


def test_a_holder_that_stopped_renewing_is_taken_over_and_the_take_over_recorded() -> None:
    leases = Leases()
    _lease(leases, OTHER).acquire("the greenfield flow", NOW)
    taken = _lease(leases).acquire("the update flow", NOW + timedelta(seconds=61))
    assert taken.action == "took-over"
    assert taken.message == f"Lease lcm-keystone taken over from {OTHER}, which stopped renewing it at {micro(NOW)}"
    stored = leases.items["lcm-keystone"]
    assert stored["spec"]["holderIdentity"] == ME and stored["spec"]["leaseTransitions"] == 1
    assert stored["metadata"]["annotations"][ANNOTATION_TAKEN_OVER] == (
        f"{OTHER} (the greenfield flow), not renewed since {micro(NOW)}")


def test_only_the_holder_renews_or_gives_it_back_and_the_record_stays() -> None:
    leases = Leases()
    mine, theirs = _lease(leases), _lease(leases, OTHER)
    mine.acquire("the update flow", NOW)
    assert theirs.renew() is False and theirs.release() is False
    assert mine.renew() is True and mine.release() is True
    spec = leases.items["lcm-keystone"]["spec"]
    assert "holderIdentity" not in spec and spec["leaseDurationSeconds"] == 60
    assert mine.live_holder(NOW) is None and mine.release() is False


def test_a_write_raced_by_another_run_is_refused_not_overwritten() -> None:
    leases = Leases()
    _lease(leases, OTHER).acquire("the greenfield flow", NOW)
    expired = NOW + timedelta(seconds=120)
    race = dict(leases.items["lcm-keystone"])
    race["spec"] = dict(race["spec"], holderIdentity="awx-job-43@runner-c", renewTime=micro(expired))
    leases.race = race
    with pytest.raises(PhaseError, match="another run changed the Lease lcm-keystone in openstack at the same moment"):
        _lease(leases).acquire("the update flow", expired)
    assert leases.items["lcm-keystone"]["spec"]["holderIdentity"] == "awx-job-43@runner-c"


def test_a_namespace_that_is_not_there_is_said_so() -> None:
    leases = Leases()

    def create(body: dict, namespace: str) -> None:
        raise error(NotFoundError, 404)
    leases.create = create  # type: ignore[method-assign]
    with pytest.raises(LeaseNamespaceMissing):
        _lease(leases).acquire("the update flow", NOW)
