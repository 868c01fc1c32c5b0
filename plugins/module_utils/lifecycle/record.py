# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ServiceLifecycle record: one per service, its state and Phase history.

Status writes replace the whole status with the resourceVersion that was
read, so two writers never lose each other's history entries: a conflict
(409) re-reads and re-applies the change.
A Lifecycle keeps the record as it last read or wrote it: a status write
starts from it, holding only on its resourceVersion (a 409 or 404 reads
again); writing nothing, or applying the spec, is decided on a fresh read.
"""

from __future__ import annotations

import copy
import functools
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.crds.phase import Phase, phase_status
from ansible_collections.lcm.openstack.plugins.module_utils.crds.service_lifecycle import (
    HistoryEntry, LifecycleSpec, LifecycleStatus, ServiceLifecycle, lifecycle_flow, lifecycle_spec, lifecycle_status,
)
from ansible_collections.lcm.openstack.plugins.module_utils.common import transient
from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import ConflictError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.crd import lcm_resource
from ansible_collections.lcm.openstack.plugins.module_utils.kube.objects import applied, get_or_none
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.site_member import (
    SiteMember, provided_by_site, site_metadata)
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LifecycleError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import api_call
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import (
    API_VERSION, FAILED, LABEL_SERVICE, LIFECYCLE_KIND, RUNNING_STATE, SUCCEEDED,
)

HISTORY_LIMIT = 50
# The state a successful phase leaves the service in; the flows set the rest.
DONE_STATE = {"uninstall": "Removed", "trafficrollout": "Operational", "trafficdrain": "Draining"}
VERSIONED = ("install", "upgrade", "rollback")
UNREAD = object()


class Lifecycle:
    def __init__(self, dyn: Any, namespace: str, service: str, release: str) -> None:
        self.dyn, self.namespace, self.service, self.release = dyn, namespace, service, release
        self.res = lcm_resource(dyn, LIFECYCLE_KIND)
        self.known: Any = UNREAD  # the record as last read or written (None: missing)

    def ensure(self, depends_on: Optional[Sequence[str]] = None,
               site: Optional[SiteMember] = None) -> ServiceLifecycle:
        """Create the record if it is missing; set dependsOn, and the site it
        belongs to, when they are given. (An apply without them would remove
        what an earlier apply set: what is not given is carried over. So a
        record known missing is read again before the apply creates it.)"""
        if depends_on is None and site is None and self.known not in (UNREAD, None):
            return self.known
        current = self.get()
        if current is not None and depends_on is None and site is None:
            return current
        spec: LifecycleSpec = {"service": self.service, "release": self.release}
        if depends_on is None:
            depends_on = lifecycle_spec(current).get("dependsOn")
        if depends_on is not None:
            spec["dependsOn"] = list(depends_on)
        kept = site_metadata(current)
        labels = dict(kept["labels"], **(site.labels() if site else {}), **{LABEL_SERVICE: self.service})
        metadata: Dict[str, Any] = {"name": self.service, "namespace": self.namespace, "labels": labels}
        annotations = dict(kept["annotations"], **(site.annotations() if site else {}))
        if annotations:
            metadata["annotations"] = annotations
        body = {"apiVersion": API_VERSION, "kind": LIFECYCLE_KIND, "metadata": metadata, "spec": spec}
        self.known = applied(self.res, body, self.namespace, what="servicelifecycles")
        return self.known

    def running_flow(self) -> str:
        """name/startedAt of the flow running on the service, or ''."""
        flow = lifecycle_flow(self.get())
        return f"{flow.get('name')}/{flow.get('startedAt')}" if flow.get("state") == "Running" else ""

    def provided_by_site(self) -> Dict[Tuple[str, str, str], str]:
        """What the service's pods wait for that a flow of its site run creates
        beside it (lifecycle/site_member.py), from the record as last read."""
        return provided_by_site(self.get() if self.known is UNREAD else self.known)

    def get(self) -> Optional[ServiceLifecycle]:
        self.known = get_or_none(self.res, self.service, self.namespace)
        return self.known

    def phase_started(self, phase: Phase) -> None:
        name, ptype = phase["metadata"]["name"], phase["spec"]["type"]

        def change(status: LifecycleStatus) -> None:
            before = status.get("state") or ""
            status["state"] = RUNNING_STATE[ptype]
            status["currentPhase"] = name
            if phase["spec"].get("targetVersion"):
                status["targetVersion"] = phase["spec"]["targetVersion"]
            entry = _entry(status, name, ptype)
            if not _flow_running(status) and "stateBefore" not in entry:
                entry["stateBefore"] = before
            entry.update(result="Running", startedAt=phase_status(phase).get("startedAt"))
            entry.pop("completedAt", None)
            entry.pop("message", None)
            _join_flow(status, name)
        self.update(change)

    def phase_found_done(self, phase: Phase) -> None:
        """A Succeeded Phase that a re-run skips still belongs to the running flow:
        the one read for its name (running_flow), if it was read."""
        name = phase["metadata"]["name"]
        flow = lifecycle_flow(self.get() if self.known is UNREAD else self.known)
        if flow.get("state") == "Running" and name not in (flow.get("phases") or []):
            self.update(lambda status: _join_flow(status, name))

    def phase_ended(self, phase: Phase) -> None:
        name, ptype = phase["metadata"]["name"], phase["spec"]["type"]
        pstatus = phase_status(phase)

        def change(status: LifecycleStatus) -> None:
            if status.get("currentPhase") == name:
                status["currentPhase"] = ""
            entry = _entry(status, name, ptype)
            entry.update(result=pstatus.get("state"), startedAt=pstatus.get("startedAt"),
                         completedAt=pstatus.get("completedAt"), message=pstatus.get("message", ""))
            if not _flow_running(status):
                _bare_phase_ended(status, entry, ptype, pstatus.get("state"))
            if pstatus.get("state") == SUCCEEDED:
                if ptype in DONE_STATE:
                    status["state"] = DONE_STATE[ptype]
                version = phase["spec"].get("targetVersion")
                if ptype in VERSIONED and version and version != status.get("currentVersion"):
                    if status.get("currentVersion"):
                        status["previousVersion"] = status["currentVersion"]
                    status["currentVersion"] = version
        self.update(change)

    def set_state(self, state: str) -> bool:
        return self.update(lambda status: status.__setitem__("state", state))

    def update(self, change: Callable[[LifecycleStatus], None], attempts: int = 5,
               dry_run: bool = False) -> bool:
        """Apply `change` to a copy of the status; write it only if it differs.
        Returns whether anything was (or, with dry_run, would be) written.
        A first try from the record as known is not one of the `attempts`."""
        reused = not dry_run and self.known not in (UNREAD, None)
        attempt = 0
        while attempt < attempts:
            if reused:
                current = self.known
            else:
                attempt += 1
                current = self.get() or ({} if dry_run else self.ensure())
            before = lifecycle_status(current)
            status = copy.deepcopy(before)
            change(status)
            status["history"] = [{k: v for k, v in e.items() if v not in (None, "")}
                                 for e in status.get("history", [])][-HISTORY_LIMIT:]
            if status == before and reused:
                reused = False  # nothing to write: decided on a fresh read
                continue
            if status == before or dry_run:
                return status != before
            body = dict(current, status=status)
            with api_call("update", "servicelifecycles/status", self.namespace,
                          handled=(ConflictError, 404) if reused else (ConflictError,)):
                # Sent again after a blip, a replace that landed meets a conflict: read again.
                written = transient.retry(functools.partial(self.res.status.replace, body=body,
                                                            namespace=self.namespace))
                self.known = written.to_dict()
                return True
            # Someone else wrote in between (409), or it was deleted since it
            # was read (404: ensure creates it): read again.
            reused = False
        raise LifecycleError(f"ServiceLifecycle {self.service} kept changing under us; retry the task")


def set_condition(status: LifecycleStatus, kind: str, true: bool, reason: str, message: str, at: str) -> None:
    """Set the condition `kind`; its lastTransitionTime moves only when its
    status does, so a message that changes while waiting is not a transition."""
    conditions = status.setdefault("conditions", [])
    condition = next((c for c in conditions if c.get("type") == kind), None)
    if condition is None:
        condition = {"type": kind}
        conditions.append(condition)
    value = "True" if true else "False"
    if condition.get("status") != value:
        condition["lastTransitionTime"] = at
    condition.update(status=value, reason=reason, message=message)


def _flow_running(status: LifecycleStatus) -> bool:
    return (status.get("flow") or {}).get("state") == "Running"


def _bare_phase_ended(status: LifecycleStatus, entry: HistoryEntry, ptype: str, result: Optional[str]) -> None:
    """The state a phase run outside any flow leaves: a flow sets the state
    its steps lead to, a bare phase has no one after it to do so. Failed is
    Failed; a test or upgrade that Succeeded on an Operational service leaves
    it Operational (not Testing or Upgrading for good)."""
    if result == FAILED:
        status["state"] = "Failed"
    elif result == SUCCEEDED and ptype not in DONE_STATE and entry.get("stateBefore") == "Operational":
        status["state"] = "Operational"


def _join_flow(status: LifecycleStatus, name: str) -> None:
    flow = status.get("flow")
    if flow and flow.get("state") == "Running" and name not in flow.setdefault("phases", []):
        flow["phases"].append(name)


def _entry(status: LifecycleStatus, name: str, ptype: str) -> HistoryEntry:
    history = status.setdefault("history", [])
    for entry in history:
        if entry.get("name") == name:
            return entry
    entry: HistoryEntry = {"name": name, "type": ptype}
    history.append(entry)
    return entry
