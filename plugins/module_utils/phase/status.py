# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write a Phase's status as it runs, so `kubectl get phases -w` shows where
it is, and read it back as the module's snake_case return value.

status.objects is the record of every object the run applied, kept after its
Jobs are gone. The run's start replaces the list with its first entries; the
rest are appended, a few KiB a write, with the first wave's decisions. After
that a write carries only what changed: JSON Patch operations on the entries
whose state, message or ownership moved, with the counts per state and the
MESSAGE line. Changes seen while waiting are gathered and written at most
every INTERVAL seconds (the waiter calls flush() when one is due, unless the
change ended the wait), and always with or before the run's end (one write
when what is left fits in one). A phase of N objects then costs O(N) bytes
of status writes in all, where rewriting the list at every change cost
O(N^2), and no write is larger than a few KiB (entries.BUDGET), where writing
the list whole at the start was N entries at once (32 KiB for 200 Jobs).

While a run is under way, status.objects may hold fewer entries than
status.counts.total: the list is whole from the first wave's start on."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common import transient
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import api_call
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import FAILED, RUNNING, SUCCEEDED
from ansible_collections.lcm.openstack.plugins.module_utils.crds.phase import BackupSource, Phase, StoppedJob, phase_status
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import now_micro, now_text as now, parse_time
from ansible_collections.lcm.openstack.plugins.module_utils.kube.readiness import NOT_FOUND, Readiness
from ansible_collections.lcm.openstack.plugins.module_utils.kube.plain import plain
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import Redactor
from ansible_collections.lcm.openstack.plugins.module_utils.helm.render import Rendered
from ansible_collections.lcm.openstack.plugins.module_utils.phase.selection import waves
from ansible_collections.lcm.openstack.plugins.module_utils.phase.stop import describe

if TYPE_CHECKING:  # pragma: no cover
    from ansible_collections.lcm.openstack.plugins.module_utils.phase.diagnosis import Failure

Key = Tuple[str, str]
# The longest ownership reason kept per object.
REASON_LIMIT = 256
# Seconds between two writes of the changes seen while waiting.
INTERVAL = 0.5


class StatusWriter:
    def __init__(self, phases: Any, phase: Phase, objects: List[Rendered],
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
        # Imported here: a check-mode run writes no status, and the phase module
        # starts with no more modules than kubernetes.core.k8s (test_payloads.py).
        from ansible_collections.lcm.openstack.plugins.module_utils.phase.entries import ObjectEntries

        # The entries of status.objects as last written, and the objects changed since.
        self.entries = ObjectEntries(self.order)
        self.message = ""
        # The wave whose progress the MESSAGE line is to tell, once written; None: self.message as it is.
        self.waiting_in: Optional[int] = None
        self.dirty = False
        self.last_write = 0.0
        self.writes = 0
        self.under_way: Optional[Callable[[], None]] = None
        # The run's live progress lines (progress/lines.py): a note is one.
        self.lines: Optional[Any] = None

    # -- transitions ---------------------------------------------------------
    def start(self) -> Phase:
        """Running, with the list's first entries; the rest go with the next flush."""
        status = phase_status(self.phase)
        self.entries.forget()
        self._patch({
            "state": RUNNING,
            "startedAt": status.get("startedAt") or now_micro(),
            "completedAt": None, "failedObject": None, "reason": None, "logTail": None,
            "stoppedJobs": None,
            "observedGeneration": self.phase["metadata"].get("generation"),
            "specHash": self.phase["metadata"].get("labels", {}).get("lifecycle.openstack.org/spec-hash"),
            "message": "starting" if self.order else "no objects: nothing to run",
            "conditions": [_condition("Ready", "False", "Running", "the phase is running")],
            "objects": self.entries.first(self._entry),
            "counts": self._counts(),
        })
        self.dirty = self.entries.pending()
        return self.phase

    def progress(self, states: Dict[Key, Readiness]) -> None:
        """The states that changed while waiting, written by the waiter's flush()
        when due(). The MESSAGE line, which looks at the whole wave, is worded
        then, at most every INTERVAL, not at each of the O(N) changes of a wave."""
        self.states.update(states)
        self.entries.touch(states)
        self.waiting_in = self.wave
        self.dirty = True

    def _waiting_message(self, wave: int) -> str:
        waiting = [(k, r) for k, r in self.states.items() if self.wave_of.get(k) == wave and not r.terminal]
        first = f"{waiting[0][0][0]} {waiting[0][0][1]} ({waiting[0][1].message})" if waiting else ""
        more = f" and {len(waiting) - 1} more" if len(waiting) > 1 else ""
        return f"wave {wave + 1}/{self.waves}: waiting for {first}{more}" if waiting \
            else f"wave {wave + 1}/{self.waves} done"

    def record(self, result: Any) -> None:
        self.states.update(result.states)
        self.entries.touch(result.states)
        self.dirty = True

    def decided(self, applied: Iterable[Any]) -> None:
        """The ownership decisions of a wave's applied objects, written with
        the wave's start, so `kubectl get phase -o yaml` says why an object
        outlives the Phase."""
        for a in applied:
            self.ownership[(a.kind, a.name)] = (bool(a.owned), a.reason)
            self.entries.touch([(a.kind, a.name)])
        self.message, self.waiting_in = f"wave {self.wave + 1}/{self.waves}: applied", None
        self.dirty = True
        self.flush()
        self._under_way()

    def when_under_way(self, then: Optional[Callable[[], None]]) -> None:
        """Call `then` once, when the work is under way: after the first wave
        is applied or the first note is written (None: not at all)."""
        self.under_way = then

    def _under_way(self) -> None:
        then, self.under_way = self.under_way, None
        if then is not None:
            then()

    def due(self) -> Optional[float]:
        """When (time.monotonic) the changes not yet written are to be; None when there are none."""
        return self.last_write + INTERVAL if self.dirty else None

    def flush(self) -> None:
        """Write what changed since the last write: the changed entries, the
        counts and the message; in as many writes as the budget asks."""
        if not self.dirty:
            return
        if self.waiting_in is not None:
            self.message = self._waiting_message(self.waiting_in)
        message = {"message": self.message} if self.message else {}
        restarts = 0
        while True:
            if not self.entries.started:  # not this run's list (edited by hand): its start again
                restarts += 1
                if restarts > 3:
                    raise RuntimeError(f"status.objects of Phase {self.phase['metadata']['name']} keeps changing "
                                       "under this run: is another run writing it?")
                first = self.entries.first(self._entry)
                self._send({"status": dict({"objects": first, "counts": self._counts()}, **message)},
                           "application/merge-patch+json", first)
            else:
                ops, changed = self.entries.changes(self._entry)
                ops = self.entries.guarded(ops, self.phase) + [{"op": "add", "path": "/status/counts", "value": self._counts()}]
                ops += [{"op": "add", "path": "/status/message", "value": v} for v in message.values()]
                self._send(ops, "application/json-patch+json", changed=changed)
            if not self.entries.pending():
                break
        self.dirty = False

    def backup_taken(self, ref: str, source: Optional[BackupSource] = None) -> None:
        """The backup job is Current: a rollback can now restore this backup.
        `source` is the CronJob a backup Job was made from (backup_step), so
        the rollback makes its restore Job from the same one; none for the
        chart's own job-db-backup."""
        self.flush()
        self._patch({"backupRef": ref, **({"backupSource": dict(source)} if source else {})})

    def succeed(self) -> None:
        started = parse_time(phase_status(self.phase).get("startedAt"))
        took = int((datetime.now(timezone.utc) - started).total_seconds()) if started else 0
        message = f"{len(self.order)} object(s) Current in {took}s" if self.order else "no objects: nothing to run"
        self._end({"state": SUCCEEDED, "completedAt": now_micro(), "message": message,
                   "conditions": [_condition("Ready", "True", "Succeeded", message)]})

    def diagnose(self, dyn: Any, result: Any, timeout: float) -> "Failure":
        """The failed object (or, on a timeout, every one not ready) and why (phase/diagnosis.py)."""
        # Imported here, as the status entries are: only a failed run reads why.
        from ansible_collections.lcm.openstack.plugins.module_utils.phase import diagnosis  # pylint: disable=import-outside-toplevel

        return diagnosis.diagnose(dyn, self.phase["metadata"]["namespace"], self.order, result, timeout)

    def fail(self, failure: "Failure", stopped: Sequence[StoppedJob] = ()) -> None:
        """Failed, with the Jobs that were stopped because of it."""
        said = describe(list(stopped))
        self._failed(failure.failed_object, failure.reason,
                     f"{failure.message} ({said})" if said else failure.message, failure.tail, stopped)

    def fail_with(self, exc: Exception, stopped: Sequence[StoppedJob] = ()) -> None:
        from ansible_collections.lcm.openstack.plugins.module_utils.phase.diagnosis import Failure  # pylint: disable=import-outside-toplevel

        self.fail(Failure(None, "Error", str(exc)), stopped)

    def note(self, message: str) -> None:
        """What a running phase does now, for the MESSAGE column; nothing else changes."""
        self._patch({"message": self.redactor.redact(message)})
        if self.lines is not None:
            self.lines.say(message + self.lines.left())
        self._under_way()

    def succeeded(self, message: str) -> None:
        """Succeeded, with a message of the caller's (a phase that owns no objects)."""
        message = self.redactor.redact(message)
        self._end({"state": SUCCEEDED, "completedAt": now_micro(), "message": message,
                   "conditions": [_condition("Ready", "True", "Succeeded", message)]})

    def failed(self, reason: str, message: str, failed_object: Optional[str] = None) -> None:
        """Failed for a reason of the caller's (a phase that owns no objects)."""
        self._failed(failed_object, reason, message, "")

    def _failed(self, failed_object: Optional[str], reason: str, message: str, tail: str,
                stopped: Sequence[StoppedJob] = ()) -> None:
        message = self.redactor.redact(message)
        self._end({"state": FAILED, "completedAt": now_micro(), "message": message,
                   "failedObject": failed_object, "reason": reason,
                   "logTail": self.redactor.redact(tail) or None,
                   "stoppedJobs": [self.redactor.redact_deep(dict(s)) for s in stopped] or None,
                   "conditions": [_condition("Ready", "False", reason, message),
                                  _condition("Failed", "True", reason, message)]})

    # -- writing ---------------------------------------------------------------
    def _end(self, status: Dict[str, Any]) -> None:
        """The run's end: the object changes not written yet with the outcome, in one write if they fit."""
        self.message, self.waiting_in = "", None  # the outcome's own message follows
        status = dict(status, counts=self._counts()) if self.order else status
        if self.dirty and self.entries.started:
            ops, changed = self.entries.changes(self._entry)
            if self.entries.last(changed):
                ops = self.entries.guarded(ops, self.phase) + self.entries.status_ops(status, phase_status(self.phase))
                if self._send(ops, "application/json-patch+json", changed=changed):
                    self.dirty = False
                    return
        self.flush()
        self._patch(status)

    def _counts(self) -> Dict[str, int]:
        counts: Dict[str, int] = {"total": len(self.order)}
        for k in self.order:
            counts[self.states[k].state] = counts.get(self.states[k].state, 0) + 1
        return counts

    def _entry(self, k: Key) -> Dict[str, Any]:
        entry: Dict[str, Any] = {"kind": k[0], "name": k[1], "state": self.states[k].state,
                                 "message": self.redactor.redact(self.states[k].message)}
        if k in self.ownership:
            owned, reason = self.ownership[k]
            entry.update(owned=owned, reason=self.redactor.redact(reason)[:REASON_LIMIT])
        return entry

    def _patch(self, status: Dict[str, Any]) -> Phase:
        if "objects" in status:
            self._send({"status": status}, "application/merge-patch+json", status["objects"])
        else:
            self._send({"status": status}, "application/merge-patch+json")
        return self.phase

    def _send(self, body: Any, content_type: str, objects: Optional[List[Dict[str, Any]]] = None,
              changed: Optional[Dict[int, Dict[str, Any]]] = None) -> bool:
        """One write (False: the list to write again); `objects` the list it replaces the Phase's with, `changed` the entries set."""
        meta = self.phase["metadata"]
        patched_list = content_type.startswith("application/json-patch") and changed is not None
        with api_call("patch", "phases/status", meta["namespace"], handled=(422,) if patched_list else ()) as refused:
            # Both kinds of patch may be sent again: each operation sets a value,
            # so a blip does not lose the outcome nor apply it twice.
            self.phase = transient.retry(lambda: self.phases.status.patch(
                body=body, name=meta["name"], namespace=meta["namespace"], content_type=content_type, serializer=plain).to_dict())
        if refused:
            # The list is not as this run wrote it (edited by hand, or an
            # append that landed before a blip cut its answer): flush()
            # writes it again from its start.
            self.entries.forget()
            return False
        self.writes += 1
        self.last_write = time.monotonic()
        if objects is not None:
            self.entries.wrote_first(objects)
        if changed is not None:
            self.entries.wrote(changed)
        return True


def _condition(ctype: str, status: str, reason: str, message: str) -> Dict[str, str]:
    return {"type": ctype, "status": status, "reason": reason, "message": message[:1024],
            "lastTransitionTime": now()}
