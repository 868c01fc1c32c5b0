"""plugins/module_utils/kube/watch.py: one watch, resumed from its last
resourceVersion, listing again on 410 and after a broken connection."""

from __future__ import annotations


class _Res:
    kind, group_version, name = "Job", "batch/v1", "jobs"

    def __init__(self, lists):
        self.lists = list(lists)

    def get(self, **_kwargs):
        class _R:
            def __init__(self, data):
                self.data = data

            def to_dict(self):
                return self.data
        return _R(self.lists.pop(0))


class _Dyn:
    """The watch of a KindWatch (set as its watcher): each call to stream()
    plays the next script, a list of events or an HTTP status to fail with."""

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
        yield from script


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


def test_a_dropped_connection_lists_again_and_carries_on() -> None:
    from urllib3.exceptions import ProtocolError

    cut = ProtocolError("Response ended prematurely")
    w, events, waits = _run_watch(
        [{"metadata": {"resourceVersion": "10"}, "items": []},
         {"metadata": {"resourceVersion": "12"}, "items": [_raw_job("db-sync", "12")]},
         {"metadata": {"resourceVersion": "30"}, "items": [_raw_job("db-sync", "30", complete=True)]}],
        [cut, ConnectionResetError(104, "Connection reset by peer")], stop_after=3)
    assert [kind for kind, _w, _p in events] == ["LIST", "BREAK", "LIST", "BREAK", "LIST"]
    assert events[1][2] is cut
    assert (w.lists, w.breaks) == (3, 2)
    assert waits == [0.5, 0.5]  # each break follows a good list: the backoff starts again


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
    waits = []
    w.stopped.wait = waits.append
    original = w._list

    def list_then_stop():
        out = original()
        w.stopped.set()
        return out
    w._list = list_then_stop
    w.run()
    assert waits == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert w.lists == 1


def test_a_terminal_answer_is_not_retried() -> None:
    from kubernetes.client.rest import ApiException

    forbidden = ApiException(status=403, reason="Forbidden")
    _w, events, waits = _run_watch([{"metadata": {"resourceVersion": "10"}, "items": []}],
                                   [forbidden], stop_after=99)
    assert [kind for kind, _w, _p in events] == ["LIST", "ERROR"]
    assert events[-1][2] is forbidden and waits == []
