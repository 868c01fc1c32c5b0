# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wait, by watch, until a set of objects is Current or one of them Failed.

One watch per kind (objects the phase applied carry its label), one per
object the phase only shares, and one on the pods of the Jobs waited for (by
their job-name label), so a Job whose pods keep failing or cannot be
scheduled fails without waiting for the Job's own verdict (kube/failures.py).
Each watch (kube/watch.py) lists once, then watches from that list's
resourceVersion, resumes from the last resourceVersion it saw when a watch
ends or breaks, and lists again on 410 Gone, until the wait's deadline: a
network blip never fails a phase. No polling: the wait returns as soon as the event that decides
it arrives, or when the grace of an unschedulable pod ends (the next wake-up
of the event queue).
"""

from __future__ import annotations

import queue
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common import transient
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseGone
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import api_error
from ansible_collections.lcm.openstack.plugins.module_utils.kube.failures import JOB_NAME_LABEL, FailurePolicy
from ansible_collections.lcm.openstack.plugins.module_utils.kube.readiness import Readiness
from ansible_collections.lcm.openstack.plugins.module_utils.kube.tracker import Key, Target, Tracker, WaitResult
from ansible_collections.lcm.openstack.plugins.module_utils.kube.watch import KindWatch


def wait_for(
    dyn: Any,
    namespace: str,
    targets: Sequence[Target],
    label_selector: str,
    timeout: float,
    on_change: Optional[Callable[[Dict[Key, Readiness]], None]] = None,
    fail_fast: bool = True,
    policy: FailurePolicy = FailurePolicy(),
    pending: Optional[Any] = None,
    on_gone: Optional[Callable[[Key], Optional[str]]] = None,
) -> WaitResult:
    """Block until every target is Current, one is Failed (fail_fast), or the timeout.

    `on_change` is told the states that changed (the first time: every
    target's), so that keeping up costs it O(changes), not O(targets), an event.
    `pending` (the Phase's status writer) gathers what on_change tells it and
    says when it wants to write it (`due()`, on the time.monotonic clock); the
    loop wakes then and calls its `flush()`, so a change is written within its
    interval even when no event follows it. `on_gone` is asked, when a target
    is deleted under the wait, whether the wait has lost its reason (the Phase
    or its namespace deleted): an answer ends the wait with PhaseGone saying
    it, where the wait would otherwise last until its timeout."""
    events: "queue.Queue" = queue.Queue()
    tracker = Tracker(targets, policy)
    watches = _start_watches(dyn, namespace, targets, label_selector, events)
    listed: set = set()
    deadline = time.monotonic() + timeout
    try:
        while True:
            if len(listed) == len(watches) and tracker.decided(fail_fast):  # once every watch has listed
                return tracker.result()
            now = time.monotonic()
            remaining = deadline - now
            if remaining <= 0:
                return tracker.result(timed_out=True)
            _flush_due(pending, now)
            wakes = [t for t in (tracker.next_check(), pending.due() if pending else None) if t is not None]
            try:
                kind, w, payload = events.get(
                    timeout=remaining if not wakes else max(0.0, min(remaining, min(wakes) - now)))
            except queue.Empty:  # the timeout, a write due, or the end of a grace: look again
                if tracker.tick() and on_change:
                    on_change(tracker.changes())
                continue
            if kind == "ERROR":
                raise api_error(payload, "watch", w.res.name, namespace)
            if kind == "BREAK":
                tracker.breaks.append(f"{w.res.kind}: {transient.describe(payload)}")
                continue
            if kind == "LIST":
                listed.add(id(w))
            if kind == "DELETED" and on_gone is not None:  # before on_change writes to a Phase that may be gone
                _ask_gone(on_gone, w, payload, tracker)
            changed = tracker.seen(w, payload, gone=kind == "DELETED", full_list=kind == "LIST")
            if changed and on_change:
                on_change(tracker.changes())
    finally:
        for w in watches:
            w.stop()


def _ask_gone(on_gone: Callable[[Key], Optional[str]], w: Any, payload: List[Dict[str, Any]],
              tracker: Tracker) -> None:
    """A target deleted: one question (on_gone), not a poll; PhaseGone when the wait lost its reason."""
    for obj in payload:
        key = (w.res.kind, (obj.get("metadata") or {}).get("name"))
        if key in tracker.wanted:
            reason = on_gone(key)
            if reason:
                raise PhaseGone(reason)
            return


def _flush_due(pending: Optional[Any], now: float) -> None:
    due = pending.due() if pending is not None else None
    if due is not None and due <= now:
        pending.flush()


def _start_watches(dyn: Any, namespace: str, targets: Sequence[Target], label_selector: str,
                   events: "queue.Queue") -> List[KindWatch]:
    by_kind: Dict[Tuple[str, str], List[Key]] = {}
    watches: List[KindWatch] = []
    for t in targets:
        if t.labelled:
            by_kind.setdefault((t.api_version, t.kind), []).append(t.key)
        else:
            res = dyn.resources.get(api_version=t.api_version, kind=t.kind)
            watches.append(KindWatch(dyn, res, namespace, events, [t.key],
                                     field_selector=f"metadata.name={t.name}"))
    for (api_version, kind), keys in by_kind.items():
        res = dyn.resources.get(api_version=api_version, kind=kind)
        watches.append(KindWatch(dyn, res, namespace, events, keys, label_selector=label_selector))
    jobs = sorted({t.name for t in targets if t.kind == "Job"})
    if jobs:  # a Job's pods carry its name, not the phase's label
        res = dyn.resources.get(api_version="v1", kind="Pod")
        watches.append(KindWatch(dyn, res, namespace, events, [], job_pods=True,
                                 label_selector=f"{JOB_NAME_LABEL} in ({','.join(jobs)})"))
    for w in watches:
        w.start()
    return watches
