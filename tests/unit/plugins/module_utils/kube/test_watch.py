"""plugins/module_utils/kube/watch.py: one watch, resumed from its last
resourceVersion when it ends or breaks, listing again on 410."""

from __future__ import annotations

from support.fake_lists import JobLists


_Res = JobLists


def _run_until_listed(w):
    """Run the watch's loop until its first list succeeds; the backoff
    waits it asked for, in order (none is slept)."""
    waits = []
    w.stopped.wait = waits.append
    original = w._list

    def list_then_stop():
        out = original()
        w.stopped.set()
        return out
    w._list = list_then_stop
    w.run()
    return waits


class _Dyn:
    """The watch of a KindWatch (set as its watcher): each call to stream()
    plays the next script, a list of events (an exception among them is
    raised when reached: a stream cut after those events) or an HTTP status
    to fail with."""

    def __init__(self, scripts):
        self.scripts = list(scripts)
        self.resource_versions = []

    def stop(self):
        pass

    def stream(self, _list, resource_version=None, serialize=True, **_kwargs):
        assert serialize is False  # the raw event objects, no ResourceInstance around them
        self.resource_versions.append(resource_version)
        script = self.scripts.pop(0) if self.scripts else []
        if isinstance(script, int):
            from kubernetes.client.rest import ApiException

            raise ApiException(status=script, reason="Gone")
        if isinstance(script, Exception):
            raise script  # pylint: disable=raising-bad-type
        for event in script:
            if isinstance(event, Exception):
                raise event
            yield event


def _raw_job(name, rv, complete=False):
    conds = [{"type": "Complete", "status": "True"}] if complete else []
    return {"kind": "Job", "apiVersion": "batch/v1",
            "metadata": {"name": name, "resourceVersion": rv}, "status": {"conditions": conds}}


def test_a_watch_resumes_from_the_last_resource_version_and_relists_on_410() -> None:
    import queue as _queue

    from ansible_collections.lcm.openstack.plugins.module_utils.kube.watch import KindWatch

    res = _Res([{"metadata": {"resourceVersion": "10"}, "items": []},
                {"metadata": {"resourceVersion": "30"}, "items": [_raw_job("db-sync", "30", complete=True)]}])
    dyn = _Dyn([
        [{"type": "ADDED", "raw_object": _raw_job("db-sync", "11")},
         {"type": "BOOKMARK", "raw_object": {"metadata": {"resourceVersion": "15"}}}],  # ends: resume at 15
        410,  # expired: list again
    ])
    events: "_queue.Queue" = _queue.Queue()
    w = KindWatch(dyn, res, "ns", events, [("Job", "db-sync")])
    w.watcher = dyn
    original = w._watch_from

    def watch_then_stop(rv):
        out = original(rv)
        if len(dyn.resource_versions) >= 2:
            w.stopped.set()
        return out
    w._watch_from = watch_then_stop
    w.run()
    kinds = []
    while not events.empty():
        kind, _w, payload = events.get()
        kinds.append((kind, [o["metadata"]["resourceVersion"] for o in payload]))
    assert dyn.resource_versions == ["10", "15"]  # resumed from the bookmark, not from the list
    assert kinds == [("LIST", []), ("ADDED", ["11"]), ("LIST", ["30"])]
    assert w.lists == 2


def _run_watch(lists, scripts, stop_after):
    """Run one kind's watch over scripted lists and watches; stop after `stop_after` lists."""
    import queue as _queue

    from ansible_collections.lcm.openstack.plugins.module_utils.kube import watch

    res, dyn = _Res(lists), _Dyn(scripts)
    events: "_queue.Queue" = _queue.Queue()
    w = watch.KindWatch(dyn, res, "ns", events, [("Job", "db-sync")])
    w.watcher = dyn
    original = w._list

    def list_then_maybe_stop():
        out = original()
        if w.lists >= stop_after:
            w.stopped.set()
        return out
    w._list = list_then_maybe_stop
    waits = []
    w.stopped.wait = waits.append  # no real backoff in a unit test
    w.run()
    out = []
    while not events.empty():
        out.append(events.get())
    return w, out, waits


def test_a_dropped_connection_resumes_from_the_last_resource_version_seen() -> None:
    import queue as _queue

    from urllib3.exceptions import ProtocolError

    from ansible_collections.lcm.openstack.plugins.module_utils.kube import watch

    cut = ProtocolError("Response ended prematurely")
    res = _Res([{"metadata": {"resourceVersion": "10"}, "items": []}])
    dyn = _Dyn([
        [{"type": "ADDED", "raw_object": _raw_job("db-sync", "11")}, cut],  # one event, then the cut
        [ConnectionResetError(104, "Connection reset by peer")],  # refused at once: the backoff grows
        [{"type": "MODIFIED", "raw_object": _raw_job("db-sync", "12", complete=True)}],
    ])
    events: "_queue.Queue" = _queue.Queue()
    w = watch.KindWatch(dyn, res, "ns", events, [("Job", "db-sync")])
    w.watcher = dyn
    waits = []
    w.stopped.wait = waits.append  # no real backoff in a unit test
    original = w._watch_from

    def watch_then_stop(rv):
        if len(dyn.resource_versions) == 2:  # the third watch is the last
            w.stopped.set()
        return original(rv)
    w._watch_from = watch_then_stop
    w.run()
    seen = []
    while not events.empty():
        kind, _w, payload = events.get()
        seen.append((kind, payload if kind == "BREAK" else [o["metadata"]["resourceVersion"] for o in payload]))
    assert dyn.resource_versions == ["10", "11", "11"]  # resumed where the cut stream got to, twice
    assert seen[:2] == [("LIST", []), ("ADDED", ["11"])] and seen[2] == ("BREAK", cut)
    assert [k for k, _p in seen[3:]] == ["BREAK", "MODIFIED"] and seen[-1][1] == ["12"]
    assert (w.lists, w.breaks) == (1, 2)  # listed once: nothing is read twice
    assert waits == [0.5, 1.0]


def test_a_break_of_the_first_list_lists_again_and_carries_on() -> None:
    from urllib3.exceptions import ProtocolError

    cut = ProtocolError("Response ended prematurely")

    class _CutOnce(_Res):
        def get(self, **kwargs):
            if not getattr(self, "cut", False):
                self.cut = True
                raise cut
            return super().get(**kwargs)

    import queue as _queue

    from ansible_collections.lcm.openstack.plugins.module_utils.kube import watch

    res = _CutOnce([{"metadata": {"resourceVersion": "12"}, "items": [_raw_job("db-sync", "12")]}])
    events: "_queue.Queue" = _queue.Queue()
    w = watch.KindWatch(_Dyn([]), res, "ns", events, [("Job", "db-sync")])
    waits = _run_until_listed(w)
    kinds = []
    while not events.empty():
        kinds.append(events.get()[0])
    assert kinds == ["BREAK", "LIST"] and (w.lists, w.breaks) == (1, 1) and waits == [0.5]


def test_an_apiserver_that_stays_away_backs_off_boundedly() -> None:
    from urllib3.exceptions import MaxRetryError, NewConnectionError

    refused = MaxRetryError(None, "/apis/batch/v1/jobs", NewConnectionError(None, "Connection refused"))

    class _Away(_Res):
        def __init__(self):
            super().__init__([])
            self.calls = 0

        def get(self, **_kwargs):
            self.calls += 1
            if self.calls <= 7:
                raise refused
            return super().get()

    import queue as _queue

    from ansible_collections.lcm.openstack.plugins.module_utils.kube import watch

    res = _Away()
    res.lists = [{"metadata": {"resourceVersion": "40"}, "items": []}]
    events: "_queue.Queue" = _queue.Queue()
    w = watch.KindWatch(_Dyn([]), res, "ns", events, [("Job", "db-sync")])
    waits = _run_until_listed(w)
    assert waits == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert w.lists == 1


def test_a_terminal_answer_is_not_retried() -> None:
    from kubernetes.client.rest import ApiException

    forbidden = ApiException(status=403, reason="Forbidden")
    _w, events, waits = _run_watch([{"metadata": {"resourceVersion": "10"}, "items": []}],
                                   [forbidden], stop_after=99)
    assert [kind for kind, _w, _p in events] == ["LIST", "ERROR"]
    assert events[-1][2] is forbidden and waits == []


def test_watches_that_end_at_once_with_nothing_seen_are_resumed_after_a_backoff() -> None:
    """A proxy closing every watch request at once: resumed from the same
    resourceVersion after a growing wait, not in a spin; a watch that sees
    an event resets the wait."""
    import queue as _queue

    from ansible_collections.lcm.openstack.plugins.module_utils.kube.watch import KindWatch

    res = _Res([{"metadata": {"resourceVersion": "10"}, "items": []}])
    dyn = _Dyn([[], [], [], [{"type": "MODIFIED", "raw_object": _raw_job("db-sync", "12")}], []])
    w = KindWatch(dyn, res, "ns", _queue.Queue(), [("Job", "db-sync")])
    w.watcher = dyn
    waits = []

    def wait(seconds):
        waits.append(seconds)
        if len(dyn.resource_versions) >= 5:
            w.stopped.set()
    w.stopped.wait = wait
    w.run()
    assert dyn.resource_versions == ["10", "10", "10", "10", "12"]
    assert waits == [0.5, 1, 2, 0.5]  # the event between them starts the backoff again
