# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One Helm operation per release at a time, enforced in the cluster with a Lease.

helm_release takes the coordination.k8s.io Lease `lcm-helm-<release>` in the
release's namespace around each command that changes the release (install,
upgrade, rollback, uninstall) and gives it back when the command ends,
however it ended. The holder is the playbook run (kube/lease.py): the calls of
one run (a flow calls helm_release more than once) are one holder, any other
run is another. A second run is refused before it changes anything, naming
the holder, its operation and since when. Without the Lease it was told by
Helm that the name is still in use or that another operation is in progress,
or was told to clear the `pending-install` record of an install that was
running fine.

The Lease lasts the command's timeout plus a margin and is renewed every
third of that while the command runs (hooks and an atomic rollback may take
longer than one timeout). A run that is killed stops renewing: the Lease
expires on its own, and the next run takes it over and records from whom.

Checking before and taking just before the command leaves a gap: another run
may have finished an operation in between. Once the Lease is held, the
release's history is read again; if its last revision moved, the run stops
and says so instead of acting on what it read before.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Callable, Dict, Iterator, List, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError, LcmError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.lease import (
    Holder, Lease, LeaseNamespaceMissing, holder_identity,
)
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import utcnow
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import GROUP

ANNOTATION_OPERATION = f"{GROUP}/helm-operation"
LABEL_RELEASE = f"{GROUP}/helm-release"
# Seconds the Lease outlasts the command's timeout, so a killed run's Lease
# expires on its own only after its Helm would have given up.
MARGIN = 60

History = List[Dict[str, Any]]


def lease_name(release: str) -> str:
    return f"lcm-helm-{release}"


class ReleaseLease(Lease):
    def __init__(self, dyn: Any, namespace: str, release: str, holder: str, duration: int) -> None:
        super().__init__(dyn, namespace, lease_name(release), holder, duration, purpose_key=ANNOTATION_OPERATION,
                         labels={LABEL_RELEASE: release})
        self.release_name = release

    took_over_hint = " (its run was killed or lost); look at the release's history"

    def label(self) -> str:
        return f"release {self.release_name}: Lease {self.name}"

    def refusal(self, held: Holder, now: datetime, pending: str = "") -> KubeError:
        return KubeError(
            f"another operation holds release {self.release_name}: {held.identity} ({held.purpose or 'helm'}) since "
            f"{held.since}, renewed {held.renewed_ago(now)}s ago (Lease {self.name} in {self.namespace})"
            f"{pending}. Nothing was changed. Wait for it to end, then run again; if that run is gone, the "
            f"lease is free {held.free_in(now)}s from now")

    def raced(self) -> KubeError:
        return KubeError(f"another operation holds release {self.release_name}: it took the Lease {self.name} in "
                         f"{self.namespace} at the same moment. Nothing was changed. Wait for it to end, "
                         "then run again")


class ReleaseGuard:
    """What helm_release asks of the Lease: whether another run holds the
    release, and holding it around one command."""

    def __init__(self, dyn: Any, namespace: str, release: str, holder: Optional[str] = None,
                 renew_every: Optional[float] = None) -> None:
        self.dyn, self.namespace, self.release = dyn, namespace, release
        self.holder = holder or holder_identity()
        self.renew_every = renew_every  # seconds; a third of the Lease's duration unless given
        self.warnings: List[str] = []

    def held_by_another(self, history: History) -> Optional[str]:
        """For a pending-* release: the refusal naming the other live run that
        holds it, or None (free, expired, this run's, or unreadable)."""
        lease = ReleaseLease(self.dyn, self.namespace, self.release, self.holder, MARGIN)
        try:
            now = utcnow()
            held = lease.live_holder(now)
        except LcmError:  # no right to read it: the release says what it can
            return None
        if held is None or held.identity == self.holder:
            return None
        last = history[-1]
        pending = f"; meanwhile the release is {last.get('status')} at revision {last.get('revision')}"
        return str(lease.refusal(held, now, pending))

    @contextmanager
    def held(self, operation: str, timeout: int, before: History,
             read_history: Callable[[], History]) -> Iterator[None]:
        """Hold the release for `operation` (its Helm command runs in the block),
        refusing if another run holds it or has changed it since `before`."""
        duration = int(timeout) + MARGIN
        lease = ReleaseLease(self.dyn, self.namespace, self.release, self.holder, duration)
        try:
            taken = lease.acquire(operation)
        except LeaseNamespaceMissing:
            # No release can be there yet, nor a Lease: Helm creates the namespace.
            yield
            return
        if taken.action == "took-over":
            self.warnings.append(taken.message)
        renewer = _Renewer(lease, self.renew_every or duration / 3)
        try:
            moved = _moved(before, read_history())
            if moved:
                raise KubeError(f"another operation changed release {self.release} while this run prepared its "
                                f"{operation}: {moved}. Nothing was changed; run again to act on what it is now")
            renewer.start()
            yield
        finally:
            renewer.stop()
            try:
                lease.release()
            except LcmError as exc:
                self.warnings.append(f"release {self.release}: the Lease {lease.name} could not be given back "
                                     f"({exc}); it expires on its own {duration}s after its last renewal")


def _moved(before: History, after: History) -> str:
    """How the release's last revision changed, or '' when it did not."""
    def point(history: History) -> Any:
        return (history[-1].get("revision"), history[-1].get("status")) if history else None

    if point(before) == point(after):
        return ""
    was = "no release" if not before else f"revision {before[-1].get('revision')} ({before[-1].get('status')})"
    now = "no release" if not after else f"revision {after[-1].get('revision')} ({after[-1].get('status')})"
    return f"it was {was}, it is now {now}"


class _Renewer:
    """Renews the Lease from a thread while the command runs. A failed renewal
    is tried again at the next turn; the Lease lasts three of them."""

    def __init__(self, lease: Lease, interval: float) -> None:
        self.lease, self.interval = lease, interval
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"renew-{lease.name}", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopped.set()
        if self.thread.is_alive():
            self.thread.join(timeout=30)

    def _run(self) -> None:
        while not self.stopped.wait(self.interval):
            try:
                if not self.lease.renew():
                    return  # no longer ours
            except Exception:  # noqa: BLE001 - tried again at the next turn  # pylint: disable=broad-except
                continue
