# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One flow per service at a time, enforced in the cluster with a Lease.

A flow takes the coordination.k8s.io Lease `lcm-flow-<service>` in the
service's namespace when it starts and gives it back when it ends. Its holder
is the playbook run (host and process id of ansible-playbook, found among the
module's ancestors), so every module call of one run is the same holder and
any other run is not. While the run lives, a small process left behind by
the start renews the Lease; when the playbook exits, however it exits, that
process sees it (a pidfd, no polling) and gives the Lease back. If the host
itself is lost, the Lease expires `duration` seconds after its last renewal
and the next flow takes it over, which the Lease records (an annotation and
spec.leaseTransitions).

A second flow on a held service is refused before it changes anything, with
the holder, its flow and since when. This is the lock kube's leader election
uses, written out because client-go's leaderelection has no Python port in
the kubernetes client.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.compat import ConflictError, DynamicApiError, NotFoundError
from ansible_collections.lcm.openstack.plugins.module_utils.errors import PhaseError, api_error
from ansible_collections.lcm.openstack.plugins.module_utils.model import LABEL_SERVICE

API_VERSION, KIND = "coordination.k8s.io/v1", "Lease"
DURATION = 60  # seconds without renewal after which a holder is taken to be gone
ANNOTATION_FLOW = "lifecycle.openstack.org/flow"
ANNOTATION_TAKEN_OVER = "lifecycle.openstack.org/taken-over-from"


def lease_name(service: str) -> str:
    return f"lcm-flow-{service}"


def holder_identity(pid: Optional[int] = None) -> str:
    """The playbook run: its host and the process id of ansible-playbook."""
    return f"{socket.gethostname()}/{pid or playbook_pid()}"


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


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _micro(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse(text: Optional[str]) -> Optional[datetime]:
    if not text:
        return None
    return datetime.strptime(text.replace("Z", "")[:26], "%Y-%m-%dT%H:%M:%S.%f" if "." in text
                             else "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)


@dataclass
class Outcome:
    action: str  # acquired, renewed, took-over
    message: str


class FlowLease:
    def __init__(self, dyn: Any, namespace: str, service: str, holder: str, duration: int = DURATION) -> None:
        self.namespace, self.service, self.holder, self.duration = namespace, service, holder, duration
        self.name = lease_name(service)
        self.res = dyn.resources.get(api_version=API_VERSION, kind=KIND)

    def acquire(self, flow: str, now: Optional[datetime] = None) -> Outcome:
        """Take the Lease for `flow`, or raise naming who holds it."""
        now = now or _now()
        lease = self._get()
        if lease is None:
            try:
                self.res.create(body=self._body(flow, now, now, 0), namespace=self.namespace)
                return Outcome("acquired", f"{self.service}: flow lease {self.name} taken by {self.holder}")
            except DynamicApiError as exc:
                if exc.status != 409:
                    raise api_error(exc, "create", "leases", self.namespace) from exc
            lease = self._get() or {}
        spec = lease.get("spec") or {}
        current = spec.get("holderIdentity") or ""
        annotations = (lease.get("metadata") or {}).get("annotations") or {}
        if current == self.holder:
            self._replace(lease, self._body(flow, _parse(spec.get("acquireTime")) or now, now,
                                            spec.get("leaseTransitions") or 0))
            return Outcome("renewed", f"{self.service}: flow lease {self.name} renewed by {self.holder}")
        renewed = _parse(spec.get("renewTime")) or _parse(spec.get("acquireTime"))
        expires = renewed + timedelta(seconds=spec.get("leaseDurationSeconds") or self.duration) if renewed else None
        if current and expires is not None and expires > now:
            raise PhaseError(
                f"{self.service} is held by another {annotations.get(ANNOTATION_FLOW) or ''} flow: "
                f"{current}, since {spec.get('acquireTime')}, renewed {int((now - renewed).total_seconds())}s ago "
                f"(Lease {self.name} in {self.namespace}). One flow at a time per service: wait for it to end; "
                f"if that run is gone, the lease is free {int((expires - now).total_seconds()) + 1}s from now")
        body = self._body(flow, now, now, (spec.get("leaseTransitions") or 0) + 1)
        if current:  # expired: its holder stopped renewing
            body["metadata"]["annotations"][ANNOTATION_TAKEN_OVER] = (
                f"{current} ({annotations.get(ANNOTATION_FLOW, '')} flow), not renewed since {spec.get('renewTime')}")
        self._replace(lease, body)
        if current:
            return Outcome("took-over", f"{self.service}: flow lease {self.name} taken over from {current}, "
                                        f"which stopped renewing it at {spec.get('renewTime')}")
        return Outcome("acquired", f"{self.service}: flow lease {self.name} taken by {self.holder}")

    def renew(self) -> bool:
        """Renew while this holder holds it; False once it does not."""
        lease = self._get()
        spec = (lease or {}).get("spec") or {}
        if lease is None or spec.get("holderIdentity") != self.holder:
            return False
        spec = dict(spec, renewTime=_micro(_now()))
        self._replace(lease, dict(lease, spec=spec))
        return True

    def release(self) -> bool:
        """Give the Lease back if this holder holds it (the record stays)."""
        lease = self._get()
        spec = (lease or {}).get("spec") or {}
        if lease is None or spec.get("holderIdentity") != self.holder:
            return False
        spec = {k: v for k, v in spec.items() if k not in ("holderIdentity", "acquireTime", "renewTime")}
        self._replace(lease, dict(lease, spec=spec))
        return True

    # -- the API -------------------------------------------------------------
    def _body(self, flow: str, acquired: datetime, renewed: datetime, transitions: int) -> Dict[str, Any]:
        return {"apiVersion": API_VERSION, "kind": KIND,
                "metadata": {"name": self.name, "namespace": self.namespace,
                             "labels": {LABEL_SERVICE: self.service},
                             "annotations": {ANNOTATION_FLOW: flow}},
                "spec": {"holderIdentity": self.holder, "leaseDurationSeconds": self.duration,
                         "acquireTime": _micro(acquired), "renewTime": _micro(renewed),
                         "leaseTransitions": transitions}}

    def _get(self) -> Optional[Dict[str, Any]]:
        try:
            return self.res.get(name=self.name, namespace=self.namespace).to_dict()
        except NotFoundError:
            return None
        except DynamicApiError as exc:
            raise api_error(exc, "get", "leases", self.namespace) from exc

    def _replace(self, lease: Dict[str, Any], body: Dict[str, Any]) -> None:
        """Write with the resourceVersion read: two runs cannot both win."""
        body = dict(body, metadata=dict(body["metadata"], resourceVersion=lease["metadata"]["resourceVersion"]))
        try:
            self.res.replace(body=body, name=self.name, namespace=self.namespace)
        except ConflictError as exc:
            raise PhaseError(f"{self.service}: another run changed the flow lease {self.name} at the same "
                             "moment; it holds the service now. Wait for it to end") from exc
        except DynamicApiError as exc:
            raise api_error(exc, "update", "leases", self.namespace) from exc
