# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write a Phase's status as it runs, so `kubectl get phases -w` shows where
it is, and read it back as the module's snake_case return value."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common import transient
from ansible_collections.lcm.openstack.plugins.module_utils.kube import diagnose
from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import DynamicApiError
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import api_error
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import FAILED, RUNNING, SUCCEEDED
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import now_text as now, parse_time
from ansible_collections.lcm.openstack.plugins.module_utils.kube.readiness import NOT_FOUND, Readiness
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import Redactor
from ansible_collections.lcm.openstack.plugins.module_utils.helm.render import Rendered
from ansible_collections.lcm.openstack.plugins.module_utils.phase.selection import waves
from ansible_collections.lcm.openstack.plugins.module_utils.phase.stop import describe

Key = Tuple[str, str]
# The longest ownership reason kept per object: every status patch carries them all.
REASON_LIMIT = 256


@dataclass(frozen=True)
class Failure:
    """Why a phase failed, read from the cluster before its Jobs are stopped
    (stopping a Job deletes the pods whose exit it quotes)."""

    failed_object: Optional[str]
    reason: str
    message: str
    tail: str = ""


class StatusWriter:
    def __init__(self, phases: Any, phase: Dict[str, Any], objects: List[Rendered],
                 redactor: Redactor) -> None:
        self.phases, self.phase, self.redactor = phases, phase, redactor
        self.order: List[Key] = [(o.kind, o.name) for o in objects]
        self.wave_of: Dict[Key, int] = {}
        for index, wave in enumerate(waves(objects)):
            for o in wave:
                self.wave_of[(o.kind, o.name)] = index
        self.waves = max(self.wave_of.values(), default=-1) + 1
        self.wave = 0
        self.states: Dict[Key, Readiness] = {
            k: Readiness(NOT_FOUND, f"waits for wave {self.wave_of[k] + 1}") for k in self.order}
        # Whether the Phase owns each applied object, and why (ownership.decide).
        self.ownership: Dict[Key, Tuple[bool, str]] = {}

    # -- transitions ---------------------------------------------------------
    def start(self) -> Dict[str, Any]:
        status = self.phase.get("status") or {}
        return self._patch({
            "state": RUNNING,
            "startedAt": status.get("startedAt") or now(),
            "completedAt": None, "failedObject": None, "reason": None, "logTail": None,
            "stoppedJobs": None,
            "observedGeneration": self.phase["metadata"].get("generation"),
            "specHash": self.phase["metadata"].get("labels", {}).get("lifecycle.openstack.org/spec-hash"),
            "message": "starting" if self.order else "no objects: nothing to run",
            "conditions": [_condition("Ready", "False", "Running", "the phase is running")],
            "objects": self._objects(),
        })

    def progress(self, states: Dict[Key, Readiness]) -> None:
        self.states.update(states)
        waiting = [(k, r) for k, r in self.states.items()
                   if self.wave_of.get(k) == self.wave and not r.terminal]
        first = f"{waiting[0][0][0]} {waiting[0][0][1]} ({waiting[0][1].message})" if waiting else ""
        more = f" and {len(waiting) - 1} more" if len(waiting) > 1 else ""
        message = f"wave {self.wave + 1}/{self.waves}: waiting for {first}{more}" if waiting \
            else f"wave {self.wave + 1}/{self.waves} done"
        self._patch({"message": message, "objects": self._objects()})

    def record(self, result: Any) -> None:
        self.states.update(result.states)

    def decided(self, applied: Iterable[Any]) -> None:
        """Remember the ownership decisions of a wave's applied objects; the
        next status patch carries them, so `kubectl get phase -o yaml` says
        why an object outlives the Phase. No patch of its own."""
        for a in applied:
            self.ownership[(a.kind, a.name)] = (bool(a.owned), a.reason)

    def backup_taken(self, ref: str, source: Optional[Dict[str, str]] = None) -> None:
        """The backup job is Current: a rollback can now restore this backup.
        `source` is the CronJob a backup Job was made from (backup_step), so
        the rollback makes its restore Job from the same one; none for the
        chart's own job-db-backup."""
        self._patch({"backupRef": ref, **({"backupSource": dict(source)} if source else {})})

    def succeed(self) -> None:
        started = parse_time((self.phase.get("status") or {}).get("startedAt"))
        took = int((datetime.now(timezone.utc) - started).total_seconds()) if started else 0
        message = f"{len(self.order)} object(s) Current in {took}s" if self.order else "no objects: nothing to run"
        self._patch({"state": SUCCEEDED, "completedAt": now(), "message": message,
                     "conditions": [_condition("Ready", "True", "Succeeded", message)],
                     "objects": self._objects()})

    def diagnose(self, dyn: Any, result: Any, timeout: float) -> Failure:
        """The failed object (or, on a timeout, every one not ready) and why."""
        namespace = self.phase["metadata"]["namespace"]
        pods = getattr(result, "pods", {})
        if result.failed:
            key = result.failed[0]
            state = result.states[key]
            message = diagnose.why(dyn, namespace, key, state, result.objects.get(key), pods.get(key))
            tail = diagnose.log_tail(dyn, namespace, result.objects[key], pods.get(key)) \
                if key in result.objects else ""
            return Failure(f"{key[0]}/{key[1]}", state.reason or "Failed",
                           f"{key[0]} {key[1]} failed: {message.split(': ', 1)[-1]}", tail)
        pending = [k for k in self.order if k in result.states and not result.states[k].terminal]
        lines = [diagnose.why(dyn, namespace, k, result.states[k], result.objects.get(k), pods.get(k))
                 for k in pending]
        return Failure(f"{pending[0][0]}/{pending[0][1]}", "Timeout",
                       f"timed out after {timeout:.0f}s waiting for: " + "; ".join(lines))

    def fail(self, failure: Failure, stopped: Sequence[Dict[str, Any]] = ()) -> None:
        """Failed, with the Jobs that were stopped because of it."""
        said = describe(list(stopped))
        self._failed(failure.failed_object, failure.reason,
                     f"{failure.message} ({said})" if said else failure.message, failure.tail, stopped)

    def fail_with(self, exc: Exception, stopped: Sequence[Dict[str, Any]] = ()) -> None:
        self.fail(Failure(None, "Error", str(exc)), stopped)

    def note(self, message: str) -> None:
        """What a running phase does now, for the MESSAGE column; nothing else changes."""
        self._patch({"message": self.redactor.redact(message)})

    def succeeded(self, message: str) -> None:
        """Succeeded, with a message of the caller's (a phase that owns no objects)."""
        message = self.redactor.redact(message)
        self._patch({"state": SUCCEEDED, "completedAt": now(), "message": message,
                     "conditions": [_condition("Ready", "True", "Succeeded", message)],
                     "objects": self._objects()})

    def failed(self, reason: str, message: str, failed_object: Optional[str] = None) -> None:
        """Failed for a reason of the caller's (a phase that owns no objects)."""
        self._failed(failed_object, reason, message, "")

    def _failed(self, failed_object: Optional[str], reason: str, message: str, tail: str,
                stopped: Sequence[Dict[str, Any]] = ()) -> None:
        message = self.redactor.redact(message)
        self._patch({"state": FAILED, "completedAt": now(), "message": message,
                     "failedObject": failed_object, "reason": reason,
                     "logTail": self.redactor.redact(tail) or None,
                     "stoppedJobs": [self.redactor.redact_deep(dict(s)) for s in stopped] or None,
                     "conditions": [_condition("Ready", "False", reason, message),
                                    _condition("Failed", "True", reason, message)],
                     "objects": self._objects()})

    # -- writing ---------------------------------------------------------------
    def _objects(self) -> List[Dict[str, Any]]:
        out: List[Dict[str, Any]] = []
        for k in self.order:
            entry: Dict[str, Any] = {"kind": k[0], "name": k[1], "state": self.states[k].state,
                                     "message": self.redactor.redact(self.states[k].message)}
            if k in self.ownership:
                owned, reason = self.ownership[k]
                entry.update(owned=owned, reason=self.redactor.redact(reason)[:REASON_LIMIT])
            out.append(entry)
        return out

    def _patch(self, status: Dict[str, Any]) -> Dict[str, Any]:
        meta = self.phase["metadata"]
        try:
            # A merge patch may be sent again: a blip must not lose the outcome.
            self.phase = transient.retry(lambda: self.phases.status.patch(
                body={"status": status}, name=meta["name"], namespace=meta["namespace"],
                content_type="application/merge-patch+json").to_dict())
        except DynamicApiError as exc:
            raise api_error(exc, "patch", "phases/status", meta["namespace"]) from exc
        return self.phase


def _condition(ctype: str, status: str, reason: str, message: str) -> Dict[str, str]:
    return {"type": ctype, "status": status, "reason": reason, "message": message[:1024],
            "lastTransitionTime": now()}
