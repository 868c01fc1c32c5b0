"""tests/support/endpoint_watch.py: the ready endpoints of Services over time,
from one watch of their EndpointSlices (listed, watched from the list's
resourceVersion, resumed after a break, listed again on 410)."""

from __future__ import annotations

import itertools
import threading
from typing import Any, Dict, List, Optional

import pytest
from kubernetes.client.rest import ApiException

from ansible_collections.lcm.openstack.plugins.module_utils.kube import watch as kube_watch
from support.endpoint_watch import EndpointWatch, Sample, ready_addresses, spans_at_zero
from support.fake_api import Answer, OneKind, status_error


def _slice(service: str, name: str, rv: str, *endpoints: Any) -> Dict[str, Any]:
    """A slice of `service`; each endpoint an address (ready) or (address, ready or None)."""
    eps = []
    for ep in endpoints:
        address, ready = (ep, True) if isinstance(ep, str) else ep
        eps.append({"addresses": [address], "conditions": {} if ready is None else {"ready": ready}})
    return {"metadata": {"name": name, "resourceVersion": rv,
                         "labels": {"kubernetes.io/service-name": service}}, "endpoints": eps}


def _event(kind: str, obj: Dict[str, Any]) -> Dict[str, Any]:
    return {"type": kind, "raw_object": obj}


class _Slices:
    """EndpointSlices that answer each list from `lists` (the last one again
    once used up) and each watch request from `scripts`: events (an
    exception among them raised when reached), or an exception to fail
    with; then quiet watches."""

    kind, group_version, name = "EndpointSlice", "discovery.k8s.io/v1", "endpointslices"

    def __init__(self, lists: List[Any], scripts: List[Any]) -> None:
        self.lists, self.scripts = list(lists), list(scripts)
        self.selectors: List[Optional[str]] = []
        self.watched_from: List[Optional[str]] = []
        self.quiet = threading.Event()

    def get(self, namespace: str, label_selector: Optional[str] = None, **_kw: Any) -> Answer:
        self.selectors.append(label_selector)
        answer = self.lists.pop(0) if len(self.lists) > 1 else self.lists[0]
        if isinstance(answer, Exception):
            raise answer
        rv, items = answer
        return Answer({"metadata": {"resourceVersion": rv}, "items": items})

    def play(self, resource_version: Optional[str] = None, **_kw: Any) -> Any:
        self.watched_from.append(resource_version)
        if not self.scripts:
            self.quiet.wait(0.02)
            return
        script = self.scripts.pop(0)
        if isinstance(script, Exception):
            raise script
        for event in script:
            if isinstance(event, Exception):
                raise event
            yield event


@pytest.fixture(autouse=True)
def _watch_plays_the_script(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kube_watch, "raw_events", lambda res, _watcher, **kw: res.play(**kw))


def _watch(slices: _Slices, services: List[str], **kw: Any) -> EndpointWatch:
    """A watch whose clock ticks once per reading: each sample's time is its
    rank, and the stop takes the next."""
    dyn = OneKind(slices, "discovery.k8s.io/v1", "EndpointSlice")
    ticks = itertools.count()
    return EndpointWatch(dyn, "ns", services, clock=lambda: float(next(ticks)), wall=lambda: 1000.0, **kw)


def test_a_scale_to_zero_and_back_is_one_zero_span_and_other_services_keep_their_line() -> None:
    slices = _Slices(
        [("10", [_slice("keystone-api", "ks-a", "9", "10.0.0.1", "10.0.0.2"), _slice("nova-api", "nv-a", "8", "10.0.1.1")])],
        [[_event("MODIFIED", _slice("keystone-api", "ks-a", "11", "10.0.0.1", ("10.0.0.2", False))),
          _event("MODIFIED", _slice("keystone-api", "ks-a", "12")),
          _event("BOOKMARK", {"metadata": {"resourceVersion": "13"}}),
          _event("MODIFIED", _slice("keystone-api", "ks-a", "14", ("10.0.0.3", False))),  # not ready: still 0
          _event("MODIFIED", _slice("keystone-api", "ks-a", "15", "10.0.0.3", "10.0.0.4"))]])
    with _watch(slices, ["keystone-api", "nova-api"]) as w:
        assert w.wait_until("keystone-api", lambda n: n == 2 and len(w.timeline("keystone-api")) > 1, 10) == 2
    assert [(s.monotonic, s.ready) for s in w.timeline("keystone-api")] == [(0, 2), (1, 1), (2, 0), (4, 2)]
    assert w.min_ready("keystone-api") == 0
    assert w.zero_spans("keystone-api") == [(2, 4)] and w.zero_seconds("keystone-api") == 2
    assert [s.ready for s in w.timeline("nova-api")] == [1] and w.zero_spans("nova-api") == []
    assert w.timeline("nova-api")[0] == Sample(0.0, 1000.0, 1)
    # One watch for both Services, by their label, from the list's resourceVersion.
    assert slices.selectors == ["kubernetes.io/service-name in (keystone-api,nova-api)"]
    assert slices.watched_from[:2] == ["10", "15"]


def test_a_zero_span_still_open_ends_when_the_watch_stops() -> None:
    slices = _Slices([("10", [_slice("keystone-api", "ks-a", "9", "10.0.0.1")])],
                     [[_event("DELETED", _slice("keystone-api", "ks-a", "11"))]])
    with _watch(slices, ["keystone-api"]) as w:
        w.wait_until("keystone-api", lambda n: n == 0, 10)
    assert w.zero_spans("keystone-api") == [(1, 2)]  # to the stop, the clock's next tick
    assert w.min_ready("keystone-api") == 0


def test_after_410_the_list_again_is_what_counts() -> None:
    slices = _Slices(
        [("10", [_slice("keystone-api", "ks-a", "9", "10.0.0.1"), _slice("keystone-api", "ks-b", "9", "10.0.0.2")]),
         ("30", [_slice("keystone-api", "ks-a", "29", "10.0.0.1", "10.0.0.5", "10.0.0.6")])],
        [[_event("MODIFIED", _slice("keystone-api", "ks-a", "11"))], ApiException(status=410, reason="Gone")])
    with _watch(slices, ["keystone-api"]) as w:
        w.wait_until("keystone-api", lambda n: n == 3, 10)
    # ks-b went while the watch was expired: only the new list shows it.
    assert [s.ready for s in w.timeline("keystone-api")] == [2, 1, 3]
    assert w.kind_watch.lists == 2 and slices.watched_from[:2] == ["10", "11"]


def test_a_broken_connection_resumes_from_the_last_resource_version_seen() -> None:
    slices = _Slices([("10", [_slice("keystone-api", "ks-a", "9", "10.0.0.1")])],
                     [[_event("MODIFIED", _slice("keystone-api", "ks-a", "11")),
                       ConnectionResetError(104, "Connection reset by peer")],
                      [_event("MODIFIED", _slice("keystone-api", "ks-a", "12", "10.0.0.7"))]])
    with _watch(slices, ["keystone-api"]) as w:
        w.wait_until("keystone-api", lambda n: n == 1 and len(w.timeline("keystone-api")) == 3, 10)
    assert [s.ready for s in w.timeline("keystone-api")] == [1, 0, 1]
    assert w.breaks == 1 and w.kind_watch.lists == 1
    assert slices.watched_from[:2] == ["10", "11"]


def test_a_refused_list_is_raised_when_the_watch_starts() -> None:
    slices = _Slices([status_error(403)], [])
    with pytest.raises(Exception) as err:
        with _watch(slices, ["keystone-api"]):
            pass
    assert getattr(err.value, "status", None) == 403


def test_a_list_that_never_answers_is_a_timeout() -> None:
    slices = _Slices([ConnectionResetError(104, "Connection reset by peer")], [])
    with pytest.raises(TimeoutError, match="keystone-api in ns were not listed within 0.3 s"):
        with _watch(slices, ["keystone-api"], listed_within=0.3):
            pass


def test_wait_until_says_what_it_last_saw() -> None:
    slices = _Slices([("10", [_slice("keystone-api", "ks-a", "9", "10.0.0.1")])], [])
    with _watch(slices, ["keystone-api"]) as w:
        with pytest.raises(TimeoutError, match="keystone-api in ns: 1 ready endpoint"):
            w.wait_until("keystone-api", lambda n: n == 0, 0.2)


def test_ready_addresses_count_each_ready_address_once_for_its_own_service() -> None:
    slices = [
        _slice("keystone-api", "ks-a", "1", "10.0.0.1", ("10.0.0.2", False), ("10.0.0.3", None)),
        _slice("keystone-api", "ks-b", "1", "10.0.0.1"),  # moving between slices: listed in both for a moment
        _slice("nova-api", "nv-a", "1", "10.0.1.1"),
    ]
    assert ready_addresses(slices, "keystone-api") == 2  # .1 once, .3 (unset: ready), not .2
    assert ready_addresses(slices, "nova-api") == 1
    assert ready_addresses(slices, "cinder-api") == 0


def test_spans_at_zero() -> None:
    line = [Sample(0, 0, 2), Sample(1, 0, 0), Sample(2, 0, 0), Sample(3, 0, 1), Sample(5, 0, 0)]
    assert spans_at_zero(line, end=9) == [(1, 3), (5, 9)]
    assert spans_at_zero(line[:1], end=9) == []
    assert spans_at_zero([], end=9) == []


def test_no_service_is_refused() -> None:
    with pytest.raises(ValueError):
        EndpointWatch(OneKind(_Slices([("1", [])], []), "discovery.k8s.io/v1", "EndpointSlice"), "ns", [])
