"""plugins/module_utils/kube/lease.py: one Lease taken, renewed, refused
while another holder renews it (naming it, what for and since when), taken
over once it stops or once its process on this host is gone, given back;
every write on the resourceVersion read, so two runs cannot both win; the
holder is the playbook run."""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Dict

import pytest
from kubernetes.dynamic.exceptions import ConflictError, ForbiddenError, NotFoundError

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError
from ansible_collections.lcm.openstack.plugins.module_utils.kube import lease as kube_lease
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
    with pytest.raises(KubeError) as err:
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


def test_a_take_over_stays_recorded_when_its_holder_takes_the_lease_again() -> None:
    leases = Leases()
    _lease(leases, OTHER).acquire("the greenfield flow", NOW)
    _lease(leases).acquire("the update flow", NOW + timedelta(seconds=61))
    # Its own renewal lapsed (a loaded machine): the next phase of the same run takes it again.
    again = _lease(leases).acquire("the update flow", NOW + timedelta(seconds=130))
    assert again.action == "renewed"
    assert leases.items["lcm-keystone"]["metadata"]["annotations"][ANNOTATION_TAKEN_OVER] == (
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


def test_a_write_raced_by_another_run_is_refused_naming_the_winner_not_overwritten() -> None:
    """Two runs read the Lease free and write it together: the one whose
    write meets the conflict names the run that won, as if it had come later."""
    leases = Leases()
    _lease(leases, OTHER).acquire("the greenfield flow", NOW)
    expired = NOW + timedelta(seconds=120)
    race = dict(leases.items["lcm-keystone"])
    race["spec"] = dict(race["spec"], holderIdentity="awx-job-43@runner-c", renewTime=micro(expired))
    leases.race = race
    with pytest.raises(KubeError) as err:
        _lease(leases).acquire("the update flow", expired)
    assert str(err.value).startswith("Lease lcm-keystone in openstack is held by awx-job-43@runner-c ("), err.value
    assert leases.items["lcm-keystone"]["spec"]["holderIdentity"] == "awx-job-43@runner-c"


def test_a_write_raced_by_a_run_that_already_gave_it_back_says_so() -> None:
    """The winner of the race has already let the Lease go: no holder to
    name, the loser says another run changed it."""
    leases = Leases()
    _lease(leases, OTHER).acquire("the greenfield flow", NOW)
    expired = NOW + timedelta(seconds=120)
    race = dict(leases.items["lcm-keystone"])
    race["spec"] = {k: v for k, v in race["spec"].items() if k not in ("holderIdentity", "renewTime")}
    leases.race = race
    with pytest.raises(KubeError, match="another run changed the Lease lcm-keystone in openstack at the same moment"):
        _lease(leases).acquire("the update flow", expired)


def test_a_namespace_that_is_not_there_is_said_so() -> None:
    leases = Leases()

    def create(body: dict, namespace: str) -> None:
        raise error(NotFoundError, 404)
    leases.create = create  # type: ignore[method-assign]
    with pytest.raises(LeaseNamespaceMissing):
        _lease(leases).acquire("the update flow", NOW)


def _ended_pid() -> int:
    """The process id of a process that has ended (and was reaped)."""
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                           text=True, check=True)
    return int(ended.stdout.strip())


def test_a_holder_on_this_host_whose_process_ended_is_gone() -> None:
    ended = _ended_pid()
    gone = f"{socket.gethostname()}/{ended}"
    assert kube_lease.ended_here(gone)
    assert not kube_lease.ended_here(f"{socket.gethostname()}/{os.getpid()}")  # alive
    assert not kube_lease.ended_here(f"another-host/{ended}")  # cannot be seen from here
    assert not kube_lease.ended_here(ME)  # not a host and a process id: never taken for gone


def test_a_lease_whose_holder_ended_here_is_taken_over_before_it_expires() -> None:
    leases = Leases()
    gone = f"{socket.gethostname()}/{_ended_pid()}"
    _lease(leases, gone).acquire("the greenfield flow", NOW)
    assert _lease(leases).live_holder(NOW + timedelta(seconds=1)) is None
    taken = _lease(leases).acquire("the update flow", NOW + timedelta(seconds=1))
    assert taken.action == "took-over" and taken.message.startswith(f"Lease lcm-keystone taken over from {gone}")
    assert leases.items["lcm-keystone"]["spec"]["holderIdentity"] == ME


def test_the_playbook_is_the_outermost_ansible_ancestor(tmp_path: Path) -> None:
    # ansible-playbook -> (worker) -> python module: here a process named
    # ansible-playbook whose grandchild asks.
    script = tmp_path / "ansible-playbook"
    script.write_text("import subprocess, sys\n"
                      "subprocess.run([sys.executable, '-c', 'import subprocess, sys; subprocess.run([sys.executable, "
                      "\"-c\", sys.argv[1]], check=True)', sys.argv[1]], check=True)\n")
    probe = ("import sys; sys.path[:0] = %r; "
             "from ansible_collections.lcm.openstack.plugins.module_utils.kube import lease; "
             "print(lease.playbook_pid(), lease.holder_identity())" % (sys.path,))
    proc = subprocess.Popen([sys.executable, str(script), probe], stdout=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=30)
    pid, identity = out.split()
    assert int(pid) == proc.pid and proc.pid != os.getpid()
    assert identity == f"{socket.gethostname()}/{proc.pid}"


class _Proc:
    """/proc as playbook_pid reads it: each process's argv and parent."""

    def __init__(self, table: Dict[int, Any]) -> None:
        self.table, self.read = table, []  # type: ignore[var-annotated]

    def open(self, path: str, mode: str = "r", encoding: Any = None) -> Any:
        pid, what = int(path.split("/")[2]), path.split("/")[3]
        self.read.append(pid)
        if pid not in self.table:
            raise FileNotFoundError(path)
        argv, parent = self.table[pid]
        if what == "cmdline":
            return io.BytesIO("\0".join(argv).encode() + b"\0")
        return io.StringIO(f"{pid} (a (weird) name) S {parent} {pid} {pid} 0 -1")


@pytest.mark.parametrize("table, expected", [
    # the module, its shell, the worker ansible-playbook forked, ansible-playbook, the login shell
    ({400: (["/usr/bin/python3", "/tmp/AnsiballZ_helm_release.py"], 300), 300: (["/bin/sh", "-c"], 200),
      200: (["/usr/bin/python3", "/usr/bin/ansible-playbook", "site.yml"], 150),
      150: (["/usr/bin/python3", "/usr/bin/ansible-playbook", "site.yml"], 100), 100: (["-bash"], 1)}, 150),
    ({400: (["/usr/bin/python3", "/tmp/AnsiballZ_helm_release.py"], 300), 300: (["ansible-runner", "run"], 100),
      100: (["/bin/bash"], 1)}, 300),
    ({400: (["/usr/bin/python3", "module.py"], 100), 100: (["/bin/bash"], 1)}, 77),  # no ansible: the parent
    ({}, 77),  # no /proc to read: the parent
])
def test_the_holder_is_the_outermost_ansible_process(
        monkeypatch: pytest.MonkeyPatch, table: Dict[int, Any], expected: int) -> None:
    proc = _Proc(table)
    monkeypatch.setattr(kube_lease, "open", proc.open, raising=False)
    monkeypatch.setattr(kube_lease.os, "getppid", lambda: 77)
    assert kube_lease.playbook_pid(400) == expected
    assert proc.read[0] == 400 and 1 not in proc.read  # from the module up, never past init
    assert kube_lease.holder_identity(expected) == f"{socket.gethostname()}/{expected}"


def test_the_live_holder_says_who_what_for_since_when_and_until_when() -> None:
    leases = Leases()
    _lease(leases, OTHER, duration=300).acquire("the greenfield flow", NOW)
    held = _lease(leases).live_holder(NOW + timedelta(seconds=100))
    assert held is not None
    assert (held.identity, held.purpose, held.since) == (OTHER, "the greenfield flow", micro(NOW))
    assert held.renewed_ago(NOW + timedelta(seconds=100)) == 100
    # the holder's own duration counts, not the reader's (60 here)
    assert held.free_in(NOW + timedelta(seconds=100)) == 201
    assert _lease(leases).live_holder(NOW + timedelta(seconds=300)) is None


def test_a_lease_given_back_is_taken_as_free_and_counts_a_transition() -> None:
    leases = Leases()
    theirs = _lease(leases, OTHER)
    theirs.acquire("the greenfield flow", NOW)
    theirs.release()
    taken = _lease(leases).acquire("the update flow", NOW + timedelta(seconds=5))
    assert taken.action == "acquired" and taken.message == f"Lease lcm-keystone taken by {ME}"
    stored = leases.items["lcm-keystone"]
    assert stored["spec"]["leaseTransitions"] == 1 and stored["spec"]["acquireTime"] == micro(NOW + timedelta(seconds=5))
    assert ANNOTATION_TAKEN_OVER not in stored["metadata"]["annotations"]


def test_a_renewal_moves_the_renew_time_and_keeps_the_holder(monkeypatch: pytest.MonkeyPatch) -> None:
    leases = Leases()
    mine = _lease(leases)
    mine.acquire("the update flow", NOW)
    later = NOW + timedelta(seconds=20)
    monkeypatch.setattr(kube_lease, "now_utc", lambda: later)
    assert mine.renew() is True
    spec = leases.items["lcm-keystone"]["spec"]
    assert spec["renewTime"] == micro(later) and spec["acquireTime"] == micro(NOW) and spec["holderIdentity"] == ME
    # while it renews, another run is refused until 60s after the renewal
    with pytest.raises(KubeError, match="it is free 41s from now unless renewed"):
        _lease(leases, OTHER).acquire("the greenfield flow", later + timedelta(seconds=20))


class _LandedTwice(Leases):
    """Each write lands, then answers 409, as a write sent again after a blip whose first try had landed."""

    def create(self, body: Dict[str, Any], namespace: str) -> None:
        super().create(body, namespace)
        raise error(ConflictError, 409)

    def replace(self, body: Dict[str, Any], name: str, namespace: str) -> None:
        super().replace(body, name, namespace)
        raise error(ConflictError, 409)


def test_a_write_that_had_landed_is_not_taken_for_a_race() -> None:
    leases = _LandedTwice()
    # the create met 409: the Lease read back is ours, so it is renewed, not refused
    assert _lease(leases).acquire("the update flow", NOW).action == "renewed"
    assert leases.items["lcm-keystone"]["spec"]["holderIdentity"] == ME
    assert _lease(leases).release() is True
    assert "holderIdentity" not in leases.items["lcm-keystone"]["spec"]


def test_a_lease_created_and_deleted_meanwhile_is_a_race() -> None:
    leases = Leases()

    def create(body: Dict[str, Any], namespace: str) -> None:
        raise error(ConflictError, 409)  # someone had it; by the read below it is gone
    leases.create = create  # type: ignore[method-assign]
    with pytest.raises(KubeError, match="^another run changed the Lease lcm-keystone in openstack at the same moment$"):
        _lease(leases).acquire("the update flow", NOW)


def test_a_lease_that_may_not_be_read_or_written_is_worded_as_a_refusal() -> None:
    leases = Leases()
    leases.name = "leases"  # type: ignore[attr-defined]  # as the dynamic client's resource is named
    leases.refuse = error(ForbiddenError, 403)
    with pytest.raises(KubeError, match="could not get leases in namespace openstack: HTTP 403") as err:
        _lease(leases).acquire("the update flow", NOW)
    assert not isinstance(err.value, LeaseNamespaceMissing)
    with pytest.raises(KubeError, match="could not get leases"):
        _lease(leases).release()
    leases.refuse = None
    _lease(leases).acquire("the update flow", NOW)

    def replace(body: Dict[str, Any], name: str, namespace: str) -> None:
        raise error(ForbiddenError, 403)
    leases.replace = replace  # type: ignore[method-assign]
    with pytest.raises(KubeError, match="could not update leases in namespace openstack: HTTP 403"):
        _lease(leases).renew()
    assert leases.items["lcm-keystone"]["spec"]["holderIdentity"] == ME


def test_an_awx_job_is_named_in_the_holder_and_still_seen_gone_here() -> None:
    ended = _ended_pid()
    identity = kube_lease.holder_identity(ended, env={"JOB_ID": "4711"})
    assert identity == f"awx-job-4711@{socket.gethostname()}/{ended}"
    assert kube_lease.ended_here(identity)
    assert kube_lease.holder_identity(ended, env={}) == f"{socket.gethostname()}/{ended}"
    # Anything but a job number is not taken for one.
    assert kube_lease.holder_identity(ended, env={"JOB_ID": "x; y"}) == f"{socket.gethostname()}/{ended}"


def test_a_give_back_raced_by_its_own_renewal_reads_again_and_gives_it_back() -> None:
    """The renewer a flow's start leaves renews between the end's read and its
    write: that is the holder itself, not another run."""
    leases = Leases()
    _lease(leases).acquire("the remove flow", NOW)
    renewed = dict(leases.items["lcm-keystone"])
    renewed["spec"] = dict(renewed["spec"], renewTime=micro(NOW + timedelta(seconds=5)))
    leases.race = renewed
    assert _lease(leases).release() is True
    assert "holderIdentity" not in leases.items["lcm-keystone"]["spec"]


def test_a_give_back_raced_by_another_run_still_says_so() -> None:
    leases = Leases()
    _lease(leases).acquire("the remove flow", NOW)
    taken = dict(leases.items["lcm-keystone"])
    taken["spec"] = dict(taken["spec"], holderIdentity=OTHER, renewTime=micro(NOW + timedelta(seconds=5)))
    leases.race = taken
    with pytest.raises(KubeError, match="another run changed the Lease lcm-keystone in openstack at the same moment"):
        _lease(leases).release()
    assert leases.items["lcm-keystone"]["spec"]["holderIdentity"] == OTHER
