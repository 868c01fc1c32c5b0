# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wait, by watch, until a set of objects is Current or one of them Failed.

One watch per kind (objects the phase applied carry its label) plus one per
object the phase only shares. Each watch lists once, then watches from that
list's resourceVersion; when a watch ends it resumes from the last
resourceVersion it saw (bookmarks keep it fresh), and when the apiserver
answers 410 Gone it lists again. No sleeping, no polling: the wait returns as
soon as the event that decides it arrives.

kubernetes.core's waiter polls (wait_sleep) one object at a time, and the
python client's Watch does not resume after 410, which is why this exists.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.compat import ApiException
from ansible_collections.lcm.openstack.plugins.module_utils.compat import watch as k8s_watch
from ansible_collections.lcm.openstack.plugins.module_utils.errors import api_error
from ansible_collections.lcm.openstack.plugins.module_utils.readiness import (
    FAILED, Readiness, assess,
)

Key = Tuple[str, str]  # (kind, name)
WATCH_CHUNK_SECONDS = 55  # server-side timeout of one watch request; resumed after


@dataclass(frozen=True)
class Target:
    api_version: str
    kind: str
    name: str
    labelled: bool = True  # carries the phase label (else: watched by name)

    @property
    def key(self) -> Key:
        return (self.kind, self.name)


@dataclass
class WaitResult:
    states: Dict[Key, Readiness]
    objects: Dict[Key, Dict[str, Any]]
    timed_out: bool = False
    failed: List[Key] = field(default_factory=list)

    @property
    def pending(self) -> List[Key]:
        return [k for k, r in self.states.items() if not r.terminal]


class _KindWatch(threading.Thread):
    """List, then watch from the list's resourceVersion; resume or re-list."""

    def __init__(self, dyn: Any, resource: Any, namespace: str, events: "queue.Queue",
                 covers: Sequence[Key], label_selector: Optional[str] = None,
                 field_selector: Optional[str] = None) -> None:
        super().__init__(daemon=True, name=f"watch-{resource.kind}")
        self.dyn, self.res, self.namespace, self.events = dyn, resource, namespace, events
        self.covers = set(covers)
        self.selectors = {"label_selector": label_selector, "field_selector": field_selector}
        self.stopped = threading.Event()
        self.watcher = k8s_watch.Watch()
        self.lists = 0  # how many times it listed: 1, unless a watch expired (410)

    def stop(self) -> None:
        self.stopped.set()
        self.watcher.stop()

    def run(self) -> None:
        try:
            rv = self._list()
            while not self.stopped.is_set():
                rv = self._watch_from(rv) or self._list()
        except Exception as exc:  # noqa: BLE001 - any failure goes to the waiting thread
            self.events.put(("ERROR", self, exc))

    def _list(self) -> str:
        listed = self.res.get(namespace=self.namespace, **self.selectors).to_dict()
        self.lists += 1
        self.events.put(("LIST", self, listed.get("items") or []))
        return listed["metadata"]["resourceVersion"]

    def _watch_from(self, rv: str) -> Optional[str]:
        """Watch until the request ends; return where to resume, or None to re-list."""
        try:
            for event in self.dyn.watch(self.res, namespace=self.namespace, resource_version=rv,
                                        timeout=WATCH_CHUNK_SECONDS, watcher=self.watcher,
                                        allow_watch_bookmarks=True, **self.selectors):
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


class _Tracker:
    """The latest object and readiness of each target."""

    def __init__(self, targets: Sequence[Target]) -> None:
        self.wanted = {t.key: t for t in targets}
        self.objects: Dict[Key, Dict[str, Any]] = {}
        self.states: Dict[Key, Readiness] = {k: assess(None) for k in self.wanted}

    def seen(self, w: _KindWatch, items: List[Dict[str, Any]], gone: bool = False,
             full_list: bool = False) -> bool:
        changed = False
        present = set()
        for obj in items:
            key = (w.res.kind, obj["metadata"]["name"])
            present.add(key)
            if key in self.wanted:
                obj.setdefault("kind", w.res.kind)
                obj.setdefault("apiVersion", w.res.group_version)
                changed |= self._set(key, None if gone else obj)
        if full_list:  # what a (re-)list does not return is gone
            for key in w.covers - present:
                changed |= self._set(key, None)
        return changed

    def _set(self, key: Key, obj: Optional[Dict[str, Any]]) -> bool:
        if obj is None:
            self.objects.pop(key, None)
        else:
            self.objects[key] = obj
        new = assess(obj)
        if self.states[key] == new:
            return False
        self.states[key] = new
        return True

    def result(self, timed_out: bool = False) -> WaitResult:
        failed = [k for k, r in self.states.items() if r.state == FAILED]
        return WaitResult(dict(self.states), dict(self.objects), timed_out, failed)


def wait_for(
    dyn: Any,
    namespace: str,
    targets: Sequence[Target],
    label_selector: str,
    timeout: float,
    on_change: Optional[Callable[[Dict[Key, Readiness]], None]] = None,
    fail_fast: bool = True,
) -> WaitResult:
    """Block until every target is Current, one is Failed (fail_fast), or the timeout."""
    events: "queue.Queue" = queue.Queue()
    tracker = _Tracker(targets)
    watches = _start_watches(dyn, namespace, targets, label_selector, events)
    listed: set = set()
    deadline = time.monotonic() + timeout
    try:
        while True:
            if len(listed) == len(watches):  # decide only once every watch has listed
                states = tracker.states.values()
                if (fail_fast and any(r.state == FAILED for r in states)) or all(r.terminal for r in states):
                    return tracker.result()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return tracker.result(timed_out=True)
            try:
                kind, w, payload = events.get(timeout=remaining)
            except queue.Empty:
                continue
            if kind == "ERROR":
                raise api_error(payload, "watch", w.res.name, namespace)
            if kind == "LIST":
                listed.add(id(w))
            changed = tracker.seen(w, payload, gone=kind == "DELETED", full_list=kind == "LIST")
            if changed and on_change:
                on_change(dict(tracker.states))
    finally:
        for w in watches:
            w.stop()


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
    for w in watches:
        w.start()
    return watches
