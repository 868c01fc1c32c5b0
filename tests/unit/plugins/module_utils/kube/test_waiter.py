"""plugins/module_utils/kube/waiter.py: the wait loop over its watches (the
watch itself: test_watch.py)."""

from __future__ import annotations

from support.fake_lists import JobLists


_Res = JobLists


def _raw_job(name, rv, complete=False):
    conds = [{"type": "Complete", "status": "True"}] if complete else []
    return {"kind": "Job", "apiVersion": "batch/v1",
            "metadata": {"name": name, "resourceVersion": rv}, "status": {"conditions": conds}}


class _Watch:
    """One kind's watch as wait_for sees it: a resource, what it covers, stop()."""

    def __init__(self):
        self.res = _Res([])
        self.covers = {("Job", "db-sync")}
        self.job_pods = False
        self.stopped = False

    def stop(self):
        self.stopped = True


class _Writer:
    """A status writer with changes to write once the first is seen; its
    flush, when due, is when the Job then completes. No event comes between:
    only the due time can wake the loop."""

    def __init__(self, events, watch):
        self.events, self.watch = events, watch
        self.changes, self.flushes = [], 0

    def progress(self, states):
        self.changes.append({k: r.state for k, r in states.items()})

    def due(self):
        import time

        return time.monotonic() - 1 if self.changes and not self.flushes else None

    def flush(self):
        self.flushes += 1
        self.events.put(("MODIFIED", self.watch, [_raw_job("db-sync", "12", complete=True)]))


def test_a_change_waiting_to_be_written_wakes_the_loop_when_due(monkeypatch) -> None:
    from ansible_collections.lcm.openstack.plugins.module_utils.kube import waiter
    from ansible_collections.lcm.openstack.plugins.module_utils.kube.tracker import Target

    seen = {}

    def start(_dyn, _ns, _targets, _selector, events):
        watch = _Watch()
        seen.update(events=events, watch=watch)
        events.put(("LIST", watch, [_raw_job("db-sync", "11")]))
        return [watch]
    monkeypatch.setattr(waiter, "_start_watches", start)
    writer = None

    def on_change(states):
        nonlocal writer
        if writer is None:
            writer = _Writer(seen["events"], seen["watch"])
        writer.progress(states)

    class _Pending:  # the writer, once the first change made it
        def due(self):
            return writer.due() if writer else None

        def flush(self):
            writer.flush()

    result = waiter.wait_for(None, "ns", [Target("batch/v1", "Job", "db-sync")], "phase=x", timeout=3,
                             on_change=on_change, pending=_Pending())
    assert not result.timed_out and result.states[("Job", "db-sync")].state == "Current"
    assert writer.flushes == 1 and seen["watch"].stopped
    assert [c[("Job", "db-sync")] for c in writer.changes] == ["InProgress", "Current"]


def _deleted_under_the_wait(monkeypatch, answer):
    """A Job listed, then deleted; on_gone answers `answer`. What wait_for did, and what it was asked."""
    import pytest

    from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseGone
    from ansible_collections.lcm.openstack.plugins.module_utils.kube import waiter
    from ansible_collections.lcm.openstack.plugins.module_utils.kube.tracker import Target

    watches = []

    def start(_dyn, _ns, _targets, _selector, events):
        watch = _Watch()
        watches.append(watch)
        events.put(("LIST", watch, [_raw_job("db-sync", "11")]))
        events.put(("DELETED", watch, [_raw_job("db-sync", "12")]))
        return [watch]
    monkeypatch.setattr(waiter, "_start_watches", start)
    asked = []

    def on_gone(key):
        asked.append(key)
        return answer
    if answer:
        with pytest.raises(PhaseGone, match=answer):
            waiter.wait_for(None, "ns", [Target("batch/v1", "Job", "db-sync")], "phase=x", timeout=5, on_gone=on_gone)
        return None, asked, watches
    result = waiter.wait_for(None, "ns", [Target("batch/v1", "Job", "db-sync")], "phase=x", timeout=0.2, on_gone=on_gone)
    return result, asked, watches


def test_a_target_deleted_with_its_phase_ends_the_wait_at_once(monkeypatch) -> None:
    result, asked, watches = _deleted_under_the_wait(monkeypatch, "namespace ns is being deleted")
    assert result is None and asked == [("Job", "db-sync")] and watches[0].stopped


def test_a_target_deleted_by_hand_leaves_the_wait_to_its_timeout(monkeypatch) -> None:
    result, asked, watches = _deleted_under_the_wait(monkeypatch, None)
    assert result.timed_out and asked == [("Job", "db-sync")] and watches[0].stopped


def test_a_change_that_ends_the_wait_is_left_to_the_end_write_not_flushed(monkeypatch) -> None:
    """The Job seen Complete decides the wait: what the writer gathered is
    written with the outcome (status.py), not in a write of its own just before."""
    from ansible_collections.lcm.openstack.plugins.module_utils.kube import waiter
    from ansible_collections.lcm.openstack.plugins.module_utils.kube.tracker import Target

    def start(_dyn, _ns, _targets, _selector, events):
        watch = _Watch()
        events.put(("LIST", watch, [_raw_job("db-sync", "11")]))
        events.put(("MODIFIED", watch, [_raw_job("db-sync", "12", complete=True)]))
        return [watch]
    monkeypatch.setattr(waiter, "_start_watches", start)

    class _Due:  # a write is due as soon as there is a change
        def __init__(self):
            self.changes, self.flushed = [], []

        def progress(self, states):
            self.changes.append({k: r.state for k, r in states.items()})

        def due(self):
            return 0.0 if len(self.changes) > len(self.flushed) else None

        def flush(self):
            self.flushed.append(self.changes[-1])
    pending = _Due()
    result = waiter.wait_for(None, "ns", [Target("batch/v1", "Job", "db-sync")], "phase=x", timeout=3,
                             on_change=pending.progress, pending=pending)
    assert result.states[("Job", "db-sync")].state == "Current"
    assert [c[("Job", "db-sync")] for c in pending.changes] == ["InProgress", "Current"]
    assert [c[("Job", "db-sync")] for c in pending.flushed] == ["InProgress"]  # the last one is the end's
