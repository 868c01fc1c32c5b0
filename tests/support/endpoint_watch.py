"""How many ready endpoints some Services had over time, as their
EndpointSlices said, for tests and benches that watch an update from the
side of its clients.

One watch of the namespace's EndpointSlices of those Services (selected by
their kubernetes.io/service-name label), through the collection's own
KindWatch (kube/watch.py): a list, then a watch from the list's
resourceVersion, resumed after a break or a request's end, listed again on
410 Gone. Each Service's timeline gets a sample when its number of ready
endpoints changes: the distinct addresses of the endpoints whose
conditions.ready is not false across its slices (an unset condition counts
as ready, as the EndpointSlice API says consumers should read it; a Service
with no slice has none).

    with EndpointWatch(dyn, namespace, ["keystone-api", "nova-api"]) as watch:
        ...  # the update
    watch.min_ready("keystone-api"), watch.zero_spans("keystone-api")
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.kube.watch import KindWatch
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.endpoints import (
    SERVICE_NAME_LABEL, SLICE_API, apply_event)

Span = Tuple[float, float]  # (start, end), monotonic seconds


@dataclass(frozen=True)
class Sample:
    monotonic: float  # time.monotonic() when the event was seen
    wall: float  # time.time() at the same moment
    ready: int  # ready endpoints of the Service, across its slices


def ready_addresses(slices: Iterable[Mapping[str, Any]], service: str) -> int:
    """The distinct addresses of the ready endpoints of one Service's slices."""
    addresses = set()
    for sl in slices:
        if ((sl.get("metadata") or {}).get("labels") or {}).get(SERVICE_NAME_LABEL) != service:
            continue
        for ep in sl.get("endpoints") or []:
            if (ep.get("conditions") or {}).get("ready") is not False:
                addresses.update(ep.get("addresses") or [])
    return len(addresses)


def spans_at_zero(timeline: Sequence[Sample], end: float) -> List[Span]:
    """Where the timeline stood at 0, each span to the next sample above 0
    (or to `end` when none came)."""
    spans: List[Span] = []
    start: Optional[float] = None
    for s in timeline:
        if s.ready == 0 and start is None:
            start = s.monotonic
        elif s.ready > 0 and start is not None:
            spans.append((start, s.monotonic))
            start = None
    if start is not None:
        spans.append((start, max(start, end)))
    return spans


class EndpointWatch:
    """The ready endpoints of `services` in `namespace`, watched while in the `with` block."""

    def __init__(self, dyn: Any, namespace: str, services: Sequence[str], listed_within: float = 30.0,
                 clock: Callable[[], float] = time.monotonic, wall: Callable[[], float] = time.time) -> None:
        if not services:
            raise ValueError("no Service to watch")
        self.dyn, self.namespace, self.services = dyn, namespace, list(services)
        self.listed_within, self.clock, self.wall = listed_within, clock, wall
        self.selector = f"{SERVICE_NAME_LABEL} in ({','.join(sorted(set(self.services)))})"
        self.events: "queue.Queue" = queue.Queue()
        self.kind_watch = KindWatch(dyn, dyn.resources.get(api_version=SLICE_API, kind="EndpointSlice"),
                                    namespace, self.events, (), label_selector=self.selector)
        self.changed = threading.Condition()
        self.slices: Dict[str, Dict[str, Any]] = {}
        self.timelines: Dict[str, List[Sample]] = {s: [] for s in self.services}
        self.listed = False
        self.error: Optional[BaseException] = None
        self.breaks = 0  # connections broken or answers 5xx/429, each resumed from where it stood
        self.ended: Optional[float] = None  # monotonic time the watch stopped
        self._stop = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True, name=f"endpoints-{namespace}")

    def __enter__(self) -> "EndpointWatch":
        self.kind_watch.start()
        self._reader.start()
        with self.changed:
            if not self.changed.wait_for(lambda: self.listed or self.error is not None, self.listed_within):
                self.stop()
                raise TimeoutError(f"the EndpointSlices of {', '.join(self.services)} in {self.namespace} "
                                   f"were not listed within {self.listed_within:g} s")
        if self.error is not None:
            self.stop()
            raise self.error
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
        if self.error is not None and exc[0] is None:
            raise self.error

    def stop(self) -> None:
        if self.ended is None:
            self.ended = self.clock()
        self._stop.set()
        self.kind_watch.stop()
        self._reader.join(timeout=5)

    # -- what was seen ------------------------------------------------------------------------

    def timeline(self, service: str) -> List[Sample]:
        with self.changed:
            return list(self.timelines[service])

    def ready_now(self, service: str) -> Optional[int]:
        """The last number seen; None before the first list."""
        line = self.timeline(service)
        return line[-1].ready if line else None

    def min_ready(self, service: str) -> Optional[int]:
        """The fewest ready endpoints seen; None before the first list."""
        line = self.timeline(service)
        return min(s.ready for s in line) if line else None

    def zero_spans(self, service: str) -> List[Span]:
        """Each (start, end) the Service had no ready endpoint; one still open
        ends now, or when the watch stopped."""
        return spans_at_zero(self.timeline(service), self.ended if self.ended is not None else self.clock())

    def zero_seconds(self, service: str) -> float:
        return sum(end - start for start, end in self.zero_spans(service))

    def wait_until(self, service: str, wanted: Callable[[int], bool], timeout: float) -> int:
        """Block until the Service's number of ready endpoints is one `wanted` takes; return it."""
        def met() -> bool:
            line = self.timelines[service]
            return self.error is not None or bool(line) and wanted(line[-1].ready)
        with self.changed:
            if not self.changed.wait_for(met, timeout):
                last = self.timelines[service][-1].ready if self.timelines[service] else None
                raise TimeoutError(f"{service} in {self.namespace}: {last} ready endpoint(s) after {timeout:g} s")
            if self.error is not None:
                raise self.error
            return self.timelines[service][-1].ready

    # -- the reader ---------------------------------------------------------------------------

    def _read(self) -> None:
        while not self._stop.is_set():
            try:
                kind, _watch, payload = self.events.get(timeout=0.2)
            except queue.Empty:
                continue
            with self.changed:
                if kind == "ERROR":
                    self.error = payload
                elif kind == "BREAK":
                    self.breaks += 1
                else:
                    self._apply(kind, payload)
                self.changed.notify_all()
            if kind == "ERROR":
                return

    def _apply(self, kind: str, payload: List[Dict[str, Any]]) -> None:
        self.slices = apply_event(self.slices, kind, payload)
        self.listed = self.listed or kind == "LIST"
        if not self.listed:
            return
        now, wall = self.clock(), self.wall()
        for service in self.services:
            ready = ready_addresses(self.slices.values(), service)
            line = self.timelines[service]
            if not line or line[-1].ready != ready:
                line.append(Sample(now, wall, ready))
