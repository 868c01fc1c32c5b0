"""plugins/module_utils/traffic/endpoints.py: what a Service's EndpointSlices list, and waiting on them by watch."""

from __future__ import annotations

import threading
from typing import Any, Dict, List, Optional

import pytest
import yaml
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import NotFoundError

from ansible_collections.lcm.openstack.plugins.module_utils.traffic.endpoints import (
    Goal, SliceWatch, apply_event, endpoints_of, pods_summary, unmet,
)
from ansible_collections.lcm.openstack.plugins.module_utils.kube import watch
from support.paths import UNIT_FIXTURES

FIXTURES = UNIT_FIXTURES / "traffic"
DATA = yaml.safe_load((FIXTURES / "endpoints.yaml").read_text())
PODS = yaml.safe_load((FIXTURES / "pods.yaml").read_text())


def _labels(uid: str, _name: str) -> Optional[Dict[str, str]]:
    return DATA["pods"].get(uid)


def _goal(spec: Dict[str, Any]) -> Goal:
    return Goal(spec["label"], spec["value"], min_ready=spec.get("min_ready", 0),
                gone=frozenset(spec.get("gone") or []), rollout=spec.get("rollout", False))


@pytest.mark.parametrize("case", DATA["cases"], ids=[c["name"] for c in DATA["cases"]])
def test_unmet(case: Dict[str, Any]) -> None:
    endpoints = endpoints_of(case["slices"], "track", _labels)
    assert unmet(_goal(case["goal"]), endpoints) == case["unmet"]


def test_endpoints_carry_the_pod_its_readiness_and_its_track() -> None:
    e = DATA["endpoint"]
    slices = [{"metadata": {"name": "web-b"}, "endpoints": [e["green-2-unready"], e["gone-1"]]},
              {"metadata": {"name": "web-a"}, "endpoints": [e["blue-1"], e["green-2-unset"]]}]
    endpoints = endpoints_of(slices, "track", _labels)
    assert [(x.slice, x.as_dict()) for x in endpoints] == [  # ordered by slice name
        ("web-a", {"pod": "web-blue-1", "ready": True, "track": "blue"}),
        ("web-a", {"pod": "web-green-2", "ready": True, "track": "green"}),
        ("web-b", {"pod": "web-green-2", "ready": False, "track": "green"}),
        ("web-b", {"pod": "web-blue-9", "ready": True, "track": None}),
    ]
    assert [x.found for x in endpoints] == [True, True, True, False]


def test_pods_are_looked_up_by_uid_and_name() -> None:
    asked: List[tuple] = []

    def labels(uid: str, name: str) -> Dict[str, str]:
        asked.append((uid, name))
        return {"track": "green"}
    endpoints_of([{"metadata": {"name": "s"}, "endpoints": [DATA["endpoint"]["green-1"]]}], "track", labels)
    assert asked == [("u-green-1", "web-green-1")]


def test_pods_summary_counts_and_explains_the_first_not_ready() -> None:
    assert pods_summary([], "track=green") == "pods with track=green: 0 found"
    assert pods_summary([PODS["ready"]], "track=green") == "pods with track=green: 1 found, 0 not Ready"
    assert pods_summary([PODS["ready"], PODS["unschedulable"]], "track=green") == (
        "pods with track=green: 2 found, 1 not Ready (pod web-green-2: Pending: Unschedulable: "
        "0/2 nodes are available)")
    text = pods_summary([PODS["crashing"], PODS["unschedulable"]], "track=green")
    assert text.startswith("pods with track=green: 2 found, 2 not Ready (pod web-green-3: Running: "
                           "container api CrashLoopBackOff")
    assert text.endswith(", and 1 more)")


def test_apply_event() -> None:
    a1, a2, b = ({"metadata": {"name": n, "resourceVersion": v}} for n, v in (("a", "1"), ("a", "2"), ("b", "1")))
    slices = apply_event({}, "LIST", [a1, b])
    assert slices == {"a": a1, "b": b}
    assert apply_event(slices, "MODIFIED", [a2]) == {"a": a2, "b": b}
    assert apply_event(slices, "DELETED", [b]) == {"a": a1}
    assert apply_event(slices, "LIST", [a2]) == {"a": a2}  # a re-list replaces everything
    assert slices == {"a": a1, "b": b}  # and never changes what it was given


# -- waiting: list, watch from the list's resourceVersion, re-list on 410 -----------------

class _Result:
    def __init__(self, data: Dict[str, Any]) -> None:
        self.data = data

    def to_dict(self) -> Dict[str, Any]:
        return self.data


class _Slices:
    kind, group_version, name = "EndpointSlice", "discovery.k8s.io/v1", "endpointslices"

    def __init__(self, lists: List[List[Dict[str, Any]]]) -> None:
        self.lists, self.selectors = list(lists), []
        self.dyn: Any = None

    def get(self, **kwargs: Any) -> _Result:
        self.selectors.append(kwargs.get("label_selector"))
        items = self.lists.pop(0) if len(self.lists) > 1 else self.lists[0]
        return _Result({"metadata": {"resourceVersion": "100"}, "items": items})


class _Pods:
    def __init__(self) -> None:
        self.gets: List[str] = []

    def get(self, name: str, namespace: str, **_kw: Any) -> _Result:
        self.gets.append(name)
        uid = {"web-blue-1": "u-blue-1", "web-blue-2": "u-blue-2", "web-green-1": "u-green-1"}.get(name)
        if uid is None:
            raise NotFoundError(ApiException(status=404, reason="Not Found"))
        return _Result({"metadata": {"name": name, "labels": DATA["pods"][uid]}})


class _Resources:
    def __init__(self, slices: _Slices, pods: _Pods) -> None:
        self.by_kind = {"EndpointSlice": slices, "Pod": pods}

    def get(self, api_version: str, kind: str) -> Any:
        return self.by_kind[kind]


@pytest.fixture(autouse=True)
def _watch_plays_the_script(monkeypatch: pytest.MonkeyPatch) -> None:
    """The EndpointSlices' watch stream is the fake client's watch()."""
    monkeypatch.setattr(watch, "raw_events", lambda res, _watcher, **kw: res.dyn.watch(res, **kw))


class _Dyn:
    """watch() plays one script per call: events, or an HTTP status to fail with; then nothing."""

    def __init__(self, slices: _Slices, scripts: List[Any]) -> None:
        slices.dyn = self  # whose watch() the watch stream of the slices plays
        self.pods = _Pods()
        self.resources = _Resources(slices, self.pods)
        self.scripts = list(scripts)
        self.idle = threading.Event()

    def watch(self, _res: Any, resource_version: Optional[str] = None, **_kwargs: Any) -> Any:
        if not self.scripts:
            self.idle.wait(0.01)  # a quiet watch: nothing happens
            return
        script = self.scripts.pop(0)
        if isinstance(script, int):
            raise ApiException(status=script, reason="Gone")
        if isinstance(script, Exception):
            raise script
        yield from script


def _slice(name: str, *endpoints: str, rv: str = "101") -> Dict[str, Any]:
    return {"metadata": {"name": name, "resourceVersion": rv},
            "endpoints": [DATA["endpoint"][e] for e in endpoints]}


def test_wait_returns_when_the_watch_shows_the_goal_met() -> None:
    slices = _Slices([[_slice("web-a", "blue-1")]])
    dyn = _Dyn(slices, [[{"type": "MODIFIED", "raw_object": _slice("web-a", "green-1")}]])
    seen: List[List[str]] = []
    w = SliceWatch(dyn, "t", "web", "track")
    settled = w.wait(Goal("track", "green", min_ready=1, rollout=True), timeout=10, on_change=seen.append)
    assert settled.met is True and settled.problems == []
    assert [e.as_dict() for e in settled.endpoints] == [{"pod": "web-green-1", "ready": True, "track": "green"}]
    assert seen == [["EndpointSlice web-a still lists pod web-blue-1 (track=blue)", "no ready endpoint"]]
    assert slices.selectors == ["kubernetes.io/service-name=web"]


def test_wait_relists_after_410_and_drops_what_the_list_no_longer_has() -> None:
    slices = _Slices([[_slice("web-a", "blue-1"), _slice("web-b", "blue-2")], [_slice("web-a")]])
    dyn = _Dyn(slices, [[{"type": "MODIFIED", "raw_object": _slice("web-a", rv="102")}], 410])
    w = SliceWatch(dyn, "t", "web", "track")
    settled = w.wait(Goal("track", "lcm-drained", gone=frozenset({"web-blue-1", "web-blue-2"})), timeout=10)
    assert settled.met is True
    assert len(slices.selectors) == 2  # web-b went while the watch was expired: only the re-list shows it


def test_a_dropped_connection_is_waited_through() -> None:
    slices = _Slices([[_slice("web-a", "blue-1")]])
    dyn = _Dyn(slices, [ConnectionResetError(104, "Connection reset by peer"),
                        [{"type": "MODIFIED", "raw_object": _slice("web-a", "green-1", rv="102")}]])
    w = SliceWatch(dyn, "t", "web", "track")
    settled = w.wait(Goal("track", "green", min_ready=1, rollout=True), timeout=10)
    assert settled.met is True


def test_wait_times_out_with_what_is_still_listed() -> None:
    slices = _Slices([[_slice("web-a", "blue-1", "green-1")]])
    dyn = _Dyn(slices, [])
    w = SliceWatch(dyn, "t", "web", "track")
    settled = w.wait(Goal("track", "green", min_ready=1, rollout=True), timeout=0.3)
    assert settled.met is False
    assert settled.problems == ["EndpointSlice web-a still lists pod web-blue-1 (track=blue)"]


def test_each_pod_is_read_once() -> None:
    slices = _Slices([[_slice("web-a", "blue-1")]])
    dyn = _Dyn(slices, [[{"type": "MODIFIED", "raw_object": _slice("web-a", "blue-1", "gone-1", rv=str(rv))}
                         for rv in range(102, 106)]])
    w = SliceWatch(dyn, "t", "web", "track")
    w.wait(Goal("track", "green", min_ready=1, rollout=True), timeout=0.3)
    assert sorted(dyn.pods.gets) == ["web-blue-1", "web-blue-9"]


def test_a_watch_error_is_raised_readably() -> None:
    from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError

    slices = _Slices([[_slice("web-a", "blue-1")]])
    dyn = _Dyn(slices, [403])
    with pytest.raises(KubeError) as err:
        SliceWatch(dyn, "t", "web", "track").wait(Goal("track", "green", rollout=True), timeout=5)
    assert "endpointslices" in str(err.value) and "forbidden" in str(err.value)
