"""plugins/module_utils/kube/old_pods.py: which pods of a set of workloads run
an older template, and waiting by watch until none is left."""

from __future__ import annotations

import copy
import threading
from typing import Any, Dict, List, Optional

import pytest
import yaml
from kubernetes.client.rest import ApiException

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError, KubeError
from ansible_collections.lcm.openstack.plugins.module_utils.kube import watch
from ansible_collections.lcm.openstack.plugins.module_utils.kube.old_pods import (
    OldPod, old_pods, summary, wait_gone,
)
from ansible_collections.lcm.openstack.plugins.module_utils.kube.plain import plain
from support.paths import UNIT_FIXTURES

FIXTURES = UNIT_FIXTURES / "kube" / "old_pods"
OBJECTS = yaml.safe_load((FIXTURES / "objects.yaml").read_text())
CASES = yaml.safe_load((FIXTURES / "cases.yaml").read_text())
NS = "openstack"


def objs(*names: str) -> List[Dict[str, Any]]:
    return [copy.deepcopy(OBJECTS[n]) for n in names]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_old_pods(case: Dict[str, Any]) -> None:
    found = old_pods(objs(*case["workloads"]), objs(*case["pods"]), objs(*case.get("replica_sets", [])),
                     objs(*case.get("revisions", [])))
    assert [o.describe() for o in found] == case["old"]


def test_an_old_pod_says_what_it_runs_and_what_is_current() -> None:
    (old,) = old_pods(objs("keystone-api"), objs("keystone-api-7d9f-abc@terminating"),
                      objs("keystone-api-7d9f", "keystone-api-5c6b"))
    assert old == OldPod("keystone-api-7d9f-abc", "Deployment", "keystone-api", revision="3", current="4",
                         terminating_since="2026-11-28T10:00:00Z")


def test_a_workload_recreated_under_the_same_name_does_not_adopt_the_old_ones_pods() -> None:
    """Owners are matched by uid: the pods of a deleted StatefulSet of the same name are not its."""
    sts = objs("mariadb-server")[0]
    sts["metadata"]["uid"] = "u-sts-mariadb-new"
    assert old_pods([sts], objs("mariadb-server-0", "mariadb-server-1")) == []


def test_summary() -> None:
    old = old_pods(objs("keystone-api", "mariadb-server"), objs("keystone-api-7d9f-abc", "mariadb-server-0"),
                   objs("keystone-api-7d9f", "keystone-api-5c6b"))
    assert summary(old) == (
        "waiting for 2 old pods to go: keystone-api-7d9f-abc (Deployment keystone-api, revision 3, current 4), "
        "mariadb-server-0 (StatefulSet mariadb-server, revision mariadb-server-5f4c, current mariadb-server-6b8d)")
    assert summary(old[:1]).startswith("waiting for 1 old pod to go: keystone-api-7d9f-abc (")


# -- the wait: list, watch from there, resume after 410, confirm by one ordered read ---------------

class _Kind:
    """One kind of a namespace: what a list returns now (`truth`), and what
    each watch request streams (`scripts`: events, an HTTP status to fail
    with, or a callable run first, e.g. to wait for another kind's step).
    An event streamed changes the truth too; ("SILENT", ...) changes only
    the truth (what happens while a watch is expired)."""

    def __init__(self, kind: str, names: List[str], scripts: Optional[List[Any]] = None,
                 lists: Optional[List[List[str]]] = None) -> None:
        self.kind, self.name = kind, kind.lower() + "s"
        self.truth = {o["metadata"]["name"]: o for o in objs(*names)}
        self.scripts = list(scripts or [])
        self.lists = [objs(*names) for names in lists or []]  # answers that are not the truth, first
        self.gets: List[Dict[str, Any]] = []
        self.played: List[str] = []
        self.listed = threading.Event()

    def get(self, namespace: str, serializer: Any = None, label_selector: Optional[str] = None,
            field_selector: Optional[str] = None) -> Any:
        assert namespace == NS and serializer is plain and label_selector is None
        self.gets.append({"field_selector": field_selector})
        items = self.lists.pop(0) if self.lists else [copy.deepcopy(o) for o in self.truth.values()]
        if field_selector:
            name = field_selector.split("=", 1)[1]
            items = [i for i in items if i["metadata"]["name"] == name]
        self.listed.set()
        return _Listed({"metadata": {"resourceVersion": str(100 + len(self.gets))}, "items": items})

    def watch(self, **_kwargs: Any) -> Any:
        if not self.scripts:
            threading.Event().wait(0.01)  # a quiet watch
            return
        script = self.scripts.pop(0)
        if isinstance(script, int):
            raise ApiException(status=script, reason="Gone" if script == 410 else "Forbidden")
        for step in script:
            if callable(step):
                step()
                continue
            event, name = step
            obj = copy.deepcopy(OBJECTS[name])
            key = obj["metadata"]["name"]
            if event in ("DELETED", "SILENT-DELETED"):
                self.truth.pop(key, None)
            else:
                self.truth[key] = obj
            self.played.append(f"{event} {name}")
            if not event.startswith("SILENT"):
                obj["metadata"]["resourceVersion"] = str(200 + len(self.played))
                yield {"type": event, "raw_object": obj}


class _Listed:
    def __init__(self, data: Dict[str, Any]) -> None:
        self.data = data

    def to_dict(self) -> Dict[str, Any]:
        return self.data


class _Dyn:
    def __init__(self, *kinds: _Kind) -> None:
        self.resources = self
        self.by_kind = {k.kind: k for k in kinds}
        self.asked: List[str] = []

    def get(self, api_version: str, kind: str) -> _Kind:
        assert api_version == ("v1" if kind == "Pod" else "apps/v1")
        self.asked.append(kind)
        return self.by_kind[kind]


@pytest.fixture(autouse=True)
def _watch_plays_the_script(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watch, "raw_events", lambda res, _watcher, **kw: res.watch(**kw))


class _Lines(list):
    """The progress lines; `first` (a script step) waits until the wait told one."""

    def __init__(self) -> None:
        super().__init__()
        self.told = threading.Event()

    def append(self, line: str) -> None:
        super().append(line)
        self.told.set()

    def first(self) -> None:
        assert self.told.wait(5), "the wait told no progress line"


def _keystone(pods: _Kind) -> _Dyn:
    return _Dyn(_Kind("Deployment", ["keystone-api"]),
                _Kind("ReplicaSet", ["keystone-api-7d9f", "keystone-api-5c6b"]), pods)


def test_the_wait_returns_at_once_when_no_pod_is_old() -> None:
    lines: List[str] = []
    dyn = _keystone(_Kind("Pod", ["keystone-api-5c6b-xyz", "glance-api-1111-aaa"]))
    assert wait_gone(dyn, NS, [("Deployment", "keystone-api")], timeout=10, progress=lines.append) == []
    assert lines == []
    assert dyn.asked == ["Deployment", "ReplicaSet", "Pod"]  # no ControllerRevision for a Deployment
    assert dyn.by_kind["Deployment"].gets[0] == {"field_selector": "metadata.name=keystone-api"}


def test_the_wait_returns_once_the_events_delete_the_last_old_pod() -> None:
    lines = _Lines()
    pods = _Kind("Pod", ["keystone-api-7d9f-abc", "keystone-api-5c6b-xyz"], scripts=[
        [lines.first, ("MODIFIED", "keystone-api-7d9f-abc@terminating"), ("DELETED", "keystone-api-7d9f-abc")]])
    waited = wait_gone(_keystone(pods), NS, [("Deployment", "keystone-api")], timeout=10, progress=lines.append)
    assert waited == ["keystone-api-7d9f-abc (Deployment keystone-api, revision 3, current 4)"]
    assert pods.played == ["MODIFIED keystone-api-7d9f-abc@terminating", "DELETED keystone-api-7d9f-abc"]
    assert lines[0] == "waiting for 1 old pod to go: keystone-api-7d9f-abc (Deployment keystone-api, revision 3, current 4)"
    # told again when the set changed, unless both events came in one batch
    assert lines[1:] in ([], ["waiting for 1 old pod to go: keystone-api-7d9f-abc (Deployment keystone-api, "
                              "revision 3, current 4, terminating since 2026-11-28T10:00:00Z)"])
    assert len(pods.gets) == 2  # the list the watch started from, and the confirming read


def test_the_wait_lists_again_after_410_and_sees_what_went_meanwhile() -> None:
    pods = _Kind("Pod", ["keystone-api-7d9f-abc", "keystone-api-5c6b-xyz"],
                 scripts=[[("SILENT-DELETED", "keystone-api-7d9f-abc")], 410])
    waited = wait_gone(_keystone(pods), NS, [("Deployment", "keystone-api")], timeout=10)
    assert waited == ["keystone-api-7d9f-abc (Deployment keystone-api, revision 3, current 4)"]
    assert len(pods.gets) == 3  # listed, listed again after the 410, the confirming read


def test_the_wait_times_out_naming_every_old_pod_left() -> None:
    dyn = _Dyn(_Kind("Deployment", ["keystone-api"]),
               _Kind("ReplicaSet", ["keystone-api-7d9f", "keystone-api-5c6b"]),
               _Kind("StatefulSet", ["mariadb-server"]),
               _Kind("Pod", ["keystone-api-7d9f-abc", "keystone-api-5c6b-def", "keystone-api-5c6b-xyz",
                             "mariadb-server-0", "mariadb-server-1"]))
    with pytest.raises(KubeError) as raised:
        wait_gone(dyn, NS, [("Deployment", "keystone-api"), ("StatefulSet", "mariadb-server")], timeout=0.5)
    left = ["keystone-api-5c6b-def (Deployment keystone-api, terminating since 2026-11-28T10:00:00Z)",
            "keystone-api-7d9f-abc (Deployment keystone-api, revision 3, current 4)",
            "mariadb-server-0 (StatefulSet mariadb-server, revision mariadb-server-5f4c, current mariadb-server-6b8d)"]
    assert raised.value.details["old_pods"] == left
    assert f"3 pod(s) of an older template still in namespace {NS} after 0s: " + ", ".join(left) in str(raised.value)


def test_streams_that_show_no_old_pod_are_confirmed_by_one_read_in_causal_order() -> None:
    """The ControllerRevisions' stream is behind: it shows only revision 1, so
    the DaemonSet's pods of revision 1 look current. The confirming read sees
    revision 2, so the wait goes on; the events then bring the streams level
    and the old pod's deletion ends it."""
    confirmed = threading.Event()
    revisions = _Kind("ControllerRevision", ["ovs-agent-8f7e", "ovs-agent-9a0b"],
                      lists=[["ovs-agent-8f7e"]],  # the watch's first list: not yet revision 2
                      scripts=[[lambda: confirmed.wait(5), ("ADDED", "ovs-agent-9a0b")]])
    original = revisions.get

    def get(**kw: Any) -> Any:
        out = original(**kw)
        if len(revisions.gets) == 2:
            confirmed.set()
        return out
    revisions.get = get  # type: ignore[method-assign]
    lines = _Lines()
    pods = _Kind("Pod", ["ovs-agent-n1"], scripts=[[lines.first, ("ADDED", "ovs-agent-n2"), ("DELETED", "ovs-agent-n1")]])
    dyn = _Dyn(_Kind("DaemonSet", ["ovs-agent"]), revisions, pods)
    waited = wait_gone(dyn, NS, [("DaemonSet", "ovs-agent")], timeout=10, progress=lines.append)
    assert waited == []  # what the streams showed first: nothing old
    assert lines[0] == "waiting for 1 old pod to go: ovs-agent-n1 (DaemonSet ovs-agent, revision 1, current 2)"
    assert pods.played == ["ADDED ovs-agent-n2", "DELETED ovs-agent-n1"]
    assert len(revisions.gets) == 3 and len(pods.gets) == 3  # listed, read to confirm twice


def test_a_refused_watch_ends_the_wait_with_the_refusal() -> None:
    pods = _Kind("Pod", ["keystone-api-7d9f-abc"], scripts=[403])
    with pytest.raises(KubeError, match="could not watch pods in namespace openstack: HTTP 403"):
        wait_gone(_keystone(pods), NS, [("Deployment", "keystone-api")], timeout=10)


def test_only_workload_kinds_are_waited_for() -> None:
    with pytest.raises(InputError, match="Job db-sync: only the pods of Deployment, StatefulSet, DaemonSet"):
        wait_gone(None, NS, [("Job", "db-sync")], timeout=1)
    assert wait_gone(None, NS, [], timeout=1) == []


def test_progress_is_told_only_when_the_old_pods_change() -> None:
    """Events that change nothing about the old pods (a new pod's status) are not lines."""
    lines = _Lines()
    pods = _Kind("Pod", ["keystone-api-7d9f-abc", "keystone-api-5c6b-xyz"], scripts=[
        [lines.first, ("MODIFIED", "keystone-api-5c6b-xyz"), ("MODIFIED", "keystone-api-5c6b-xyz")]])
    with pytest.raises(KubeError):
        wait_gone(_keystone(pods), NS, [("Deployment", "keystone-api")], timeout=0.5, progress=lines.append)
    assert pods.played == ["MODIFIED keystone-api-5c6b-xyz"] * 2
    assert lines == ["waiting for 1 old pod to go: keystone-api-7d9f-abc (Deployment keystone-api, revision 3, current 4)"]
