# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A coordination.k8s.io Lease held by one playbook run at a time.

The holder is the playbook run (host and process id of ansible-playbook,
found among the module's ancestors), so every module call of one run is the
same holder and any other run is not. Taking the Lease is atomic: a create
(on 409 someone has it: read it and decide), or a replace that carries the
resourceVersion read, so two runs cannot both win. A holder that has not
renewed it for `leaseDurationSeconds` is gone: the next run takes it over,
which the Lease records (an annotation and spec.leaseTransitions). Giving it
back clears the holder; the object stays.

What a Lease is held for (a flow, a Helm operation), its name and how a
refusal reads belong to its users: lifecycle/flow_lease.py, helm/lease.py. This is
the lock kube's leader election uses, written out because client-go's
leaderelection has no Python port in the kubernetes client.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Dict, Mapping, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.common import transient
from ansible_collections.lcm.openstack.plugins.module_utils.common import compat
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError, LcmError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import api_call, api_error
# A Lease's acquireTime and renewTime are MicroTimes.
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import (  # noqa: F401 (re-exported)
    format_micro as micro, parse_time, utcnow as now_utc,
)
from ansible_collections.lcm.openstack.plugins.module_utils.kube.objects import get_or_none

API_VERSION, KIND = "coordination.k8s.io/v1", "Lease"
DURATION = 60  # seconds without renewal after which a holder is taken to be gone
RELEASE_TRIES = 3  # a give-back raced by the holder's own renewals (one every few seconds) reads again
ANNOTATION_TAKEN_OVER = "lifecycle.openstack.org/taken-over-from"
UNREAD = object()


def holder_identity(pid: Optional[int] = None, env: Optional[Mapping[str, str]] = None) -> str:
    """The playbook run: its host and the process id of ansible-playbook,
    after the AWX job's id when AWX runs it (AWX gives every job's process
    JOB_ID), so that a refusal names the job an operator can open."""
    run = f"{socket.gethostname()}/{pid or playbook_pid()}"
    job = (os.environ if env is None else env).get("JOB_ID", "")
    return f"awx-job-{job}@{run}" if job.isdigit() else run


def playbook_pid(start: Optional[int] = None) -> int:
    """The outermost ansible process among this process's ancestors (the
    module runs under a worker that ansible-playbook forked); the parent
    where /proc cannot tell."""
    pid, found = start or os.getppid(), 0
    while pid > 1:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                argv = [a.decode(errors="replace") for a in handle.read().split(b"\0")[:2]]
            with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
                parent = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
        if any(os.path.basename(a).startswith("ansible") for a in argv):
            found = pid
        pid = parent
    return found or os.getppid()


def ended_here(identity: str) -> bool:
    """A holder on this very host whose process is gone: its run has ended
    (the renewer that would give the Lease back may not have yet), so the
    Lease is free now rather than when it expires. Another host's holders
    cannot be seen from here; their Leases expire."""
    host, pid = identity.rpartition("@")[2].rpartition("/")[::2]
    return host == socket.gethostname() and pid.isdigit() and not os.path.exists(f"/proc/{int(pid)}")


@dataclass
class Outcome:
    action: str  # acquired, renewed, took-over
    message: str


@dataclass
class Holder:
    """A live holder of a Lease, as read from it."""
    identity: str
    purpose: str  # what it holds the Lease for: a flow, a Helm operation
    since: str  # spec.acquireTime as written
    renewed: datetime
    expires: datetime

    def renewed_ago(self, now: datetime) -> int:
        return int((now - self.renewed).total_seconds())

    def free_in(self, now: datetime) -> int:
        return int((self.expires - now).total_seconds()) + 1


class LeaseNamespaceMissing(KubeError):
    """The Lease's namespace does not exist (yet): nothing could hold it."""


class Lease:
    """One Lease, taken by `holder` for a purpose recorded under `purpose_key`.
    The messages are the methods at the end; users word them for what they hold."""

    def __init__(self, dyn: Any, namespace: str, name: str, holder: str, duration: int = DURATION,
                 purpose_key: str = "lifecycle.openstack.org/purpose",
                 labels: Optional[Mapping[str, str]] = None) -> None:
        self.namespace, self.name, self.holder, self.duration = namespace, name, holder, duration
        self.purpose_key, self.labels = purpose_key, dict(labels or {})
        self.res = dyn.resources.get(api_version=API_VERSION, kind=KIND)

    def acquire(self, purpose: str, now: Optional[datetime] = None, as_read: Any = UNREAD) -> Outcome:
        """Take the Lease for `purpose`, or raise naming who holds it; from
        `as_read` (read()) if given: each write holds only on what was read."""
        now = now or now_utc()
        lease = self._get() if as_read is UNREAD else as_read
        if lease is None:
            with api_call("create", "leases", self.namespace, handled=(404, 409)) as refused:
                # A create sent again after a blip that had landed meets 409: read below, it is ours.
                transient.retry(lambda: self.res.create(body=self._body(purpose, now, now, 0),
                                                        namespace=self.namespace))
                return Outcome("acquired", self.said("acquired"))
            if refused.status == 404:
                raise LeaseNamespaceMissing(str(api_error(refused.error, "create", "leases", self.namespace))) \
                    from refused.error
            lease = self._get()
            if lease is None:  # created and deleted since: someone else is at it
                raise self.raced()
        spec = lease.get("spec") or {}
        current = spec.get("holderIdentity") or ""
        if current == self.holder:
            body = self._body(purpose, parse_time(spec.get("acquireTime")) or now, now, spec.get("leaseTransitions") or 0)
            # Taken again by its holder (its renewal had lapsed under load): the take-over it records stays.
            taken_over = ((lease.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_TAKEN_OVER)
            if taken_over:
                body["metadata"]["annotations"][ANNOTATION_TAKEN_OVER] = taken_over
            self._replace(lease, body, now)
            return Outcome("renewed", self.said("renewed"))
        held = self._live(lease, now)
        if held is not None:
            raise self.refusal(held, now)
        body = self._body(purpose, now, now, (spec.get("leaseTransitions") or 0) + 1)
        if current:  # expired: its holder stopped renewing
            was = ((lease.get("metadata") or {}).get("annotations") or {}).get(self.purpose_key, "")
            body["metadata"]["annotations"][ANNOTATION_TAKEN_OVER] = (
                f"{current} ({self.what(was)}), not renewed since {spec.get('renewTime')}")
        self._replace(lease, body, now)
        if current:
            return Outcome("took-over", self.said("took-over", current, spec.get("renewTime")))
        return Outcome("acquired", self.said("acquired"))

    def live_holder(self, now: Optional[datetime] = None, as_read: Any = UNREAD) -> Optional[Holder]:
        """Who holds the Lease now (this holder too); None when it is free or expired."""
        lease = self._get() if as_read is UNREAD else as_read
        return self._live(lease, now or now_utc()) if lease is not None else None

    def read(self) -> Optional[Dict[str, Any]]:
        return self._get()

    def renew(self) -> bool:
        """Renew while this holder holds it; False once it does not."""
        lease = self._get()
        spec = (lease or {}).get("spec") or {}
        if lease is None or spec.get("holderIdentity") != self.holder:
            return False
        spec = dict(spec, renewTime=micro(now_utc()))
        self._replace(lease, dict(lease, spec=spec))
        return True

    def release(self) -> bool:
        """Give the Lease back if this holder holds it (the record stays). A
        renewal of this holder's own between the read and the write (the
        renewer left by a flow's start, lifecycle/lease_renewer.py) is no other
        run: the Lease is read again and given back."""
        for attempt in range(RELEASE_TRIES):
            lease = self._get()
            spec = (lease or {}).get("spec") or {}
            if lease is None or spec.get("holderIdentity") != self.holder:
                return False
            spec = {k: v for k, v in spec.items() if k not in ("holderIdentity", "acquireTime", "renewTime")}
            try:
                self._replace(lease, dict(lease, spec=spec))
                return True
            except LcmError:
                stored = self._get()
                ours = ((stored or {}).get("spec") or {}).get("holderIdentity") == self.holder
                if attempt + 1 == RELEASE_TRIES or not ours:
                    raise
        return False

    # -- the wording, for the users to override ----------------------------------
    def what(self, purpose: str) -> str:
        """What a holder held the Lease for, in a sentence."""
        return purpose

    # How the messages name this Lease, and what a take-over adds (subclasses say more).
    def label(self) -> str:
        return f"Lease {self.name}"

    took_over_hint = ""

    def said(self, action: str, previous: str = "", stopped: Optional[str] = None) -> str:
        if action == "took-over":
            return (f"{self.label()} taken over from {previous}, which stopped renewing it at {stopped}"
                    f"{self.took_over_hint}")
        return f"{self.label()} {'renewed' if action == 'renewed' else 'taken'} by {self.holder}"

    def refusal(self, held: Holder, now: datetime) -> KubeError:
        return KubeError(f"Lease {self.name} in {self.namespace} is held by {held.identity} "
                         f"({self.what(held.purpose)}), since {held.since}; it is free "
                         f"{held.free_in(now)}s from now unless renewed")

    def raced(self) -> KubeError:
        return KubeError(f"another run changed the Lease {self.name} in {self.namespace} at the same moment")

    # -- the API -------------------------------------------------------------
    def _live(self, lease: Dict[str, Any], now: datetime) -> Optional[Holder]:
        spec = lease.get("spec") or {}
        current = spec.get("holderIdentity") or ""
        renewed = parse_time(spec.get("renewTime")) or parse_time(spec.get("acquireTime"))
        if not current or renewed is None or ended_here(current):
            return None
        expires = renewed + timedelta(seconds=spec.get("leaseDurationSeconds") or self.duration)
        if expires <= now:
            return None
        purpose = ((lease.get("metadata") or {}).get("annotations") or {}).get(self.purpose_key) or ""
        return Holder(current, purpose, spec.get("acquireTime") or "", renewed, expires)

    def _body(self, purpose: str, acquired: datetime, renewed: datetime, transitions: int) -> Dict[str, Any]:
        return {"apiVersion": API_VERSION, "kind": KIND,
                "metadata": {"name": self.name, "namespace": self.namespace, "labels": dict(self.labels),
                             "annotations": {self.purpose_key: purpose}},
                "spec": {"holderIdentity": self.holder, "leaseDurationSeconds": self.duration,
                         "acquireTime": micro(acquired), "renewTime": micro(renewed),
                         "leaseTransitions": transitions}}

    def _get(self) -> Optional[Dict[str, Any]]:
        return get_or_none(self.res, self.name, self.namespace)

    def _replace(self, lease: Dict[str, Any], body: Dict[str, Any], now: Optional[datetime] = None) -> None:
        """Write with the resourceVersion read: two runs cannot both win. The
        one that loses names the winner when the winner now holds the Lease."""
        body = dict(body, metadata=dict(body["metadata"], resourceVersion=lease["metadata"]["resourceVersion"]))
        with api_call("update", "leases", self.namespace,
                      handled=lambda exc: isinstance(exc, compat.ConflictError)) as conflict:
            transient.retry(lambda: self.res.replace(body=body, name=self.name, namespace=self.namespace))
        if conflict:
            # Sent again after a blip, a write that landed the first time meets a conflict.
            stored = self._get()
            spec = (stored or {}).get("spec") or {}
            if any(spec.get(k) != body["spec"].get(k) for k in ("holderIdentity", "renewTime")):
                now = now or now_utc()
                held = self._live(stored, now) if stored is not None else None
                if held is not None and held.identity != self.holder:
                    raise self.refusal(held, now) from conflict.error
                raise self.raced() from conflict.error
