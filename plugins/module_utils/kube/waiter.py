# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wait, by watch, until a set of objects is Current or one of them Failed.

One watch per kind (objects the phase applied carry its label), one per
object the phase only shares, and one on the pods of the Jobs waited for (by
their job-name label), so a Job whose pods keep failing or cannot be
scheduled fails without waiting for the Job's own verdict (kube/failures.py).
Each watch lists once, then watches from that
list's resourceVersion; when a watch ends it resumes from the last
resourceVersion it saw (bookmarks keep it fresh), and when the apiserver
answers 410 Gone it lists again. A break that is not an answer about the
objects (a dropped connection, a response cut short, an apiserver restarting,
5xx or 429; common/transient.py) lists again after a bounded backoff, until the
wait's deadline: a network blip never fails a phase. No polling: the wait returns as
soon as the event that decides it arrives, or when the grace of an
unschedulable pod ends (the next wake-up of the event queue).

kubernetes.core's waiter polls (wait_sleep) one object at a time, and the
python client's Watch does not resume after 410, which is why this exists.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common import transient
from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import ApiException
from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import watch as k8s_watch
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import api_error
from ansible_collections.lcm.openstack.plugins.module_utils.kube.failures import JOB_NAME_LABEL, FailurePolicy
from ansible_collections.lcm.openstack.plugins.module_utils.kube.readiness import Readiness
from ansible_collections.lcm.openstack.plugins.module_utils.kube.plain import plain
from ansible_collections.lcm.openstack.plugins.module_utils.kube.tracker import Key, Target, Tracker, WaitResult

WATCH_CHUNK_SECONDS = 55  # server-side timeout of one watch request; resumed after


def raw_events(res: Any, watcher: Any, **kwargs: Any) -> Iterator[Dict[str, Any]]:
    """What dyn.watch(res, ...) streams, without the ResourceInstance it wraps
    each event's object in: only raw_object is read (kube/plain.py)."""
    return watcher.stream(res.get, serialize=False, timeout_seconds=WATCH_CHUNK_SECONDS, **kwargs)


class _KindWatch(threading.Thread):
    """List, then watch from the list's resourceVersion; resume or re-list."""

    def __init__(self, dyn: Any, resource: Any, namespace: str, events: "queue.Queue",
                 covers: Sequence[Key], label_selector: Optional[str] = None,
                 field_selector: Optional[str] = None, job_pods: bool = False) -> None:
        super().__init__(daemon=True, name=f"watch-{resource.kind}")
        self.dyn, self.res, self.namespace, self.events = dyn, resource, namespace, events
        self.covers = set(covers)
        self.job_pods = job_pods  # watches the pods of the Jobs waited for, not targets
        self.selectors = {"label_selector": label_selector, "field_selector": field_selector}
        self.stopped = threading.Event()
        self.watcher = k8s_watch.Watch()
        self.lists = 0  # how many times it listed: 1, unless a watch expired (410) or broke
        self.breaks = 0  # how many times the connection broke or the server answered 5xx/429

    def stop(self) -> None:
        self.stopped.set()
        self.watcher.stop()

    def run(self) -> None:
        rv: Optional[str] = None
        breaks = 0  # transient failures in a row
        while not self.stopped.is_set():
            try:
                rv = (self._watch_from(rv) if rv else None) or self._list()
                breaks = 0
            except Exception as exc:  # noqa: BLE001 - any failure goes to the waiting thread
                if not transient.is_transient(exc):
                    self.events.put(("ERROR", self, exc))
                    return
                # A break of the connection or a momentary server answer:
                # list again (events may have been missed) after a bounded
                # backoff. The wait's own deadline ends the retries.
                breaks += 1
                self.breaks += 1
                self.events.put(("BREAK", self, exc))
                rv = None
                self.stopped.wait(transient.backoff(breaks))

    def _list(self) -> str:
        listed = self.res.get(namespace=self.namespace, serializer=plain, **self.selectors).to_dict()
        self.lists += 1
        self.events.put(("LIST", self, listed.get("items") or []))
        return listed["metadata"]["resourceVersion"]

    def _watch_from(self, rv: str) -> Optional[str]:
        """Watch until the request ends; return where to resume, or None to re-list."""
        try:
            for event in raw_events(self.res, self.watcher, namespace=self.namespace,
                                    resource_version=rv, allow_watch_bookmarks=True, **self.selectors):
                obj = event["raw_object"]
                if event["type"] == "ERROR":
                    if obj.get("code") == 410:
                        return None
                    raise ApiException(status=obj.get("code"), reason=obj.get("message"))
                rv = obj.get("metadata", {}).get("resourceVersion", rv)
                if event["type"] != "BOOKMARK":
                    self.events.put((event["type"], self, [obj]))
                if self.stopped.is_set():
                    break
        except ApiException as exc:
            if exc.status == 410:
                return None
            raise
        return rv


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
) -> WaitResult:
    """Block until every target is Current, one is Failed (fail_fast), or the timeout.

    `on_change` is told the states that changed (the first time: every
    target's), so that keeping up costs it O(changes), not O(targets), an event.
    `pending` (the Phase's status writer) gathers what on_change tells it and
    says when it wants to write it (`due()`, on the time.monotonic clock); the
    loop wakes then and calls its `flush()`, so a change is written within its
    interval even when no event follows it."""
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
            changed = tracker.seen(w, payload, gone=kind == "DELETED", full_list=kind == "LIST")
            if changed and on_change:
                on_change(tracker.changes())
    finally:
        for w in watches:
            w.stop()


def _flush_due(pending: Optional[Any], now: float) -> None:
    due = pending.due() if pending is not None else None
    if due is not None and due <= now:
        pending.flush()


def _start_watches(dyn: Any, namespace: str, targets: Sequence[Target], label_selector: str,
                   events: "queue.Queue") -> List[_KindWatch]:
    by_kind: Dict[Tuple[str, str], List[Key]] = {}
    watches: List[_KindWatch] = []
    for t in targets:
        if t.labelled:
            by_kind.setdefault((t.api_version, t.kind), []).append(t.key)
        else:
            res = dyn.resources.get(api_version=t.api_version, kind=t.kind)
            watches.append(_KindWatch(dyn, res, namespace, events, [t.key],
                                      field_selector=f"metadata.name={t.name}"))
    for (api_version, kind), keys in by_kind.items():
        res = dyn.resources.get(api_version=api_version, kind=kind)
        watches.append(_KindWatch(dyn, res, namespace, events, keys, label_selector=label_selector))
    jobs = sorted({t.name for t in targets if t.kind == "Job"})
    if jobs:  # a Job's pods carry its name, not the phase's label
        res = dyn.resources.get(api_version="v1", kind="Pod")
        watches.append(_KindWatch(dyn, res, namespace, events, [], job_pods=True,
                                  label_selector=f"{JOB_NAME_LABEL} in ({','.join(jobs)})"))
    for w in watches:
        w.start()
    return watches
