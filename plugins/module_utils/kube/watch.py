# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One kind's objects in a namespace, listed once and then watched, in a thread.

What every wait of the collection is built on (kube/waiter.py for a phase's
objects, traffic/endpoints.py for EndpointSlices, lifecycle/dependency_wait.py
for the ServiceLifecycles a flow depends on): it lists, then watches from that
list's resourceVersion; when a watch request ends it resumes from the last
resourceVersion it saw (bookmarks keep it fresh), and when the apiserver
answers 410 Gone it lists again. After a break that is not an answer about
the objects (a dropped connection, a response cut short, an apiserver
restarting, 5xx or 429; common/transient.py) it watches again from the last
resourceVersion it saw, after a bounded backoff, until the waiting side gives
up at its own deadline: nothing is missed, and nothing is listed twice. What it sees goes to a queue,
as (kind, watch, objects): LIST (every object), ADDED, MODIFIED, DELETED,
BREAK (the exception) and ERROR (a terminal failure; the watch has ended).

kubernetes.core's waiter polls (wait_sleep) one object at a time, and the
python client's Watch does not resume after 410, which is why this exists.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any, Dict, Iterator, Optional, Sequence

from ansible_collections.lcm.openstack.plugins.module_utils.common import transient
from ansible_collections.lcm.openstack.plugins.module_utils.common import compat
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import answered
from ansible_collections.lcm.openstack.plugins.module_utils.kube.plain import plain

WATCH_CHUNK_SECONDS = 55  # server-side timeout of one watch request; resumed after
# A watch request that ends sooner than this with nothing seen (a proxy that
# closes long requests, an apiserver shedding watches) is resumed after the
# same backoff as a break, not at once: resuming at once would spin.
SHORT_WATCH_SECONDS = 1.0


def raw_events(res: Any, watcher: Any, **kwargs: Any) -> Iterator[Dict[str, Any]]:
    """What dyn.watch(res, ...) streams, without the ResourceInstance it wraps
    each event's object in: only raw_object is read (kube/plain.py)."""
    return watcher.stream(res.get, serialize=False, timeout_seconds=WATCH_CHUNK_SECONDS, **kwargs)


class KindWatch(threading.Thread):
    """List, then watch from the list's resourceVersion; resume or re-list."""

    def __init__(self, dyn: Any, resource: Any, namespace: str, events: "queue.Queue",
                 covers: Sequence[Any], label_selector: Optional[str] = None,
                 field_selector: Optional[str] = None, job_pods: bool = False) -> None:
        super().__init__(daemon=True, name=f"watch-{resource.kind}")
        self.dyn, self.res, self.namespace, self.events = dyn, resource, namespace, events
        self.covers = set(covers)  # what the waiting side expects the lists to hold
        self.job_pods = job_pods  # watches the pods of the Jobs waited for, not targets
        self.selectors = {"label_selector": label_selector, "field_selector": field_selector}
        self.stopped = threading.Event()
        self.watcher = compat.watch.Watch()
        self.seen: Optional[str] = None  # the last resourceVersion a list or an event carried
        self.lists = 0  # how many times it listed: 1, unless a watch expired (410)
        self.breaks = 0  # how many times the connection broke or the server answered 5xx/429

    def stop(self) -> None:
        self.stopped.set()
        self.watcher.stop()

    def run(self) -> None:
        breaks = 0  # transient failures in a row, without an event between them
        shorts = 0  # watch requests in a row that ended at once with nothing seen
        while not self.stopped.is_set():
            start, began = self.seen, time.monotonic()
            try:
                self.seen = (self._watch_from(start) if start else None) or self._list()
                breaks = 0
                quiet = bool(start) and self.seen == start and time.monotonic() - began < SHORT_WATCH_SECONDS
                shorts = shorts + 1 if quiet else 0
                if shorts:
                    self.stopped.wait(transient.backoff(shorts))
            except Exception as exc:  # noqa: BLE001 - any failure goes to the waiting thread
                if not transient.is_transient(exc):
                    self.events.put(("ERROR", self, exc))
                    return
                # A break of the connection or a momentary server answer: after a
                # bounded backoff, watch again from the last resourceVersion seen
                # (no event is missed; a list only if there was none yet, or 410).
                # A watch that saw events before it broke starts the backoff again.
                breaks = 1 if self.seen != start else breaks + 1
                self.breaks += 1
                self.events.put(("BREAK", self, exc))
                self.stopped.wait(transient.backoff(breaks))

    def _list(self) -> str:
        listed = self.res.get(namespace=self.namespace, serializer=plain, **self.selectors).to_dict()
        self.lists += 1
        self.events.put(("LIST", self, listed.get("items") or []))
        return listed["metadata"]["resourceVersion"]

    def _watch_from(self, rv: str) -> Optional[str]:
        """Watch until the request ends; return where to resume, or None to re-list."""
        with answered((410,), compat.ApiException) as expired:
            for event in raw_events(self.res, self.watcher, namespace=self.namespace,
                                    resource_version=rv, allow_watch_bookmarks=True, **self.selectors):
                obj = event["raw_object"]
                if event["type"] == "ERROR":
                    if obj.get("code") == 410:
                        return self._expired()
                    raise compat.ApiException(status=obj.get("code"), reason=obj.get("message"))
                rv = self.seen = obj.get("metadata", {}).get("resourceVersion", rv)
                if event["type"] != "BOOKMARK":
                    self.events.put((event["type"], self, [obj]))
                if self.stopped.is_set():
                    break
        if expired:
            return self._expired()
        return rv

    def _expired(self) -> None:
        """410 Gone: the resourceVersion is older than the apiserver keeps; list again."""
        self.seen = None
