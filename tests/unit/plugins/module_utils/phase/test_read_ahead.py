"""plugins/module_utils/phase/read_ahead.py: a wave's objects read with one
list per kind it holds many of, each handed out once; GETs otherwise."""

from __future__ import annotations

import copy
from typing import Any, Dict, List, Optional

import pytest
from support.fake_api import Answer, Kinds, status_error

from ansible_collections.lcm.openstack.plugins.module_utils.phase.apply import Applier
from ansible_collections.lcm.openstack.plugins.module_utils.phase.ownership import owner_reference
from ansible_collections.lcm.openstack.plugins.module_utils.phase.read_ahead import READ_AHEAD_AT, ReadAhead

PHASE = {"metadata": {"name": "svc-install-0a1b2c3d", "uid": "p-1"}}
LABELS = {"lifecycle.openstack.org/phase": "svc-install-0a1b2c3d", "lifecycle.openstack.org/service": "svc"}


class _Res:
    """One kind in memory that lists in pages of `page` and counts its requests."""

    def __init__(self, kind: str, page: int = 500, deny_list: bool = False) -> None:
        self.kind, self.name, self.namespaced = kind, kind.lower() + "s", True
        self.objects: Dict[str, Dict[str, Any]] = {}
        self.requests: List[str] = []
        self.page, self.deny_list = page, deny_list

    def add(self, name: str, namespace: str = "ns", **extra: Any) -> None:
        self.objects[name] = {"apiVersion": "batch/v1", "kind": self.kind,
                              "metadata": {"name": name, "namespace": namespace, "resourceVersion": "7"}, **extra}

    def get(self, name: Optional[str] = None, namespace: Optional[str] = None, limit: Optional[int] = None,
            _continue: Optional[str] = None, **_kw: Any) -> Answer:
        if name is not None:
            self.requests.append(f"get {name}")
            if name not in self.objects:
                raise status_error(404)
            return Answer(self.objects[name])
        self.requests.append(f"list {_continue or ''}".strip())
        if self.deny_list:
            raise status_error(403)
        items = [o for o in self.objects.values() if o["metadata"]["namespace"] == namespace]
        start = int(_continue or 0)
        end = start + min(limit or len(items), self.page)
        return Answer({"kind": f"{self.kind}List", "apiVersion": "batch/v1", "items": items[start:end],
                       "metadata": {"continue": str(end) if end < len(items) else None}})

    def server_side_apply(self, body: Dict[str, Any], name: str, **_kw: Any) -> Answer:
        self.requests.append(f"apply {name}")
        stored = copy.deepcopy(body)
        stored["metadata"]["resourceVersion"] = "8"
        self.objects[name] = stored
        return Answer(stored)


def _jobs(count: int, kind: str = "Job") -> List[Dict[str, Any]]:
    return [{"apiVersion": "batch/v1", "kind": kind, "metadata": {"name": f"job-{n:03d}"},
             "spec": {"template": {"spec": {"containers": [{"name": "main", "image": "x"}]}}}}
            for n in range(count)]


def test_many_objects_of_a_kind_are_read_with_one_list_each_handed_out_once() -> None:
    jobs = _Res("Job")
    jobs.add("job-001", status={"succeeded": 1})
    jobs.add("unrelated")
    jobs.add("job-002", namespace="elsewhere")
    ahead = ReadAhead(Kinds(jobs), "ns")
    ahead.read(_jobs(READ_AHEAD_AT))
    assert jobs.requests == ["list"]
    assert ahead.take("batch/v1", "Job", "job-001") == (True, jobs.objects["job-001"])
    assert ahead.take("batch/v1", "Job", "job-002") == (True, None)  # another namespace's is not this one
    assert ahead.take("batch/v1", "Job", "job-001") == (False, None)  # read again: by a GET
    assert ahead.take("batch/v1", "Job", "unrelated") == (False, None)  # not asked for: not kept
    assert set(ahead.held[("batch/v1", "Job")]) == {f"job-{n:03d}" for n in range(READ_AHEAD_AT)} - {"job-001", "job-002"}


def test_a_list_is_read_in_pages() -> None:
    jobs = _Res("Job", page=4)
    for n in range(READ_AHEAD_AT):
        jobs.add(f"job-{n:03d}")
    ahead = ReadAhead(Kinds(jobs), "ns")
    ahead.read(_jobs(READ_AHEAD_AT))
    assert jobs.requests == ["list", "list 4", "list 8"]
    assert all(ahead.take("batch/v1", "Job", f"job-{n:03d}")[1] is not None for n in range(READ_AHEAD_AT))


@pytest.mark.parametrize("count, kind, deny", [
    (READ_AHEAD_AT - 1, "Job", False), (READ_AHEAD_AT, "Secret", False), (READ_AHEAD_AT, "Job", True)])
def test_few_objects_secrets_and_a_kind_not_listable_are_read_by_gets(count: int, kind: str, deny: bool) -> None:
    res = _Res(kind, deny_list=deny)
    ahead = ReadAhead(Kinds(res), "ns")
    ahead.read(_jobs(count, kind))
    assert res.requests == (["list"] if deny else [])
    assert ahead.take("batch/v1", kind, "job-000") == (False, None)


def _configmaps(count: int) -> List[Dict[str, Any]]:
    return [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{n:03d}"}, "data": {"n": str(n)}}
            for n in range(count)]


def test_a_wave_applied_after_a_read_ahead_reads_nothing_more_and_decides_the_same() -> None:
    """The same wave, on the same cluster, with and without the list: the
    same actions and diffs, one list in place of a GET an object."""
    outcomes, requests = [], []
    for ahead in (False, True):
        cms = _Res("ConfigMap")
        cms.add("cm-003", data={"n": "old"})
        cms.objects["cm-003"]["metadata"]["ownerReferences"] = [  # an earlier phase's: taken over
            {"apiVersion": "lifecycle.openstack.org/v1alpha1", "kind": "Phase", "name": "svc-install-old",
             "uid": "p-0", "controller": True}]
        cms.add("cm-004", data={"n": "old"})  # outside any phase: shared
        applier = Applier(Kinds(cms), "ns")
        wave = _configmaps(READ_AHEAD_AT)
        if ahead:
            applier.read_ahead(wave)
        done = [applier.apply(o, owner_reference(PHASE), LABELS) for o in wave]
        outcomes.append([(d.key, d.action, d.owned, d.reason, d.before, d.after) for d in done])
        requests.append(cms.requests)
    assert outcomes[0] == outcomes[1]
    assert {o[1] for o in outcomes[0]} == {"created", "updated", "shared"}
    assert [r for r in requests[1] if not r.startswith("apply")] == ["list"]
    assert len([r for r in requests[0] if r.startswith("get")]) == READ_AHEAD_AT
