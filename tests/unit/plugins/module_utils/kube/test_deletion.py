"""plugins/module_utils/kube/deletion.py: delete_and_wait, the watch that sees an object go."""

from __future__ import annotations

from typing import Any, Dict, Iterator, List

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.kube import deletion


class _Listed:
    def __init__(self, items: List[Dict[str, Any]], rv: str) -> None:
        self.items, self.rv = items, rv

    def to_dict(self) -> Dict[str, Any]:
        return {"items": self.items, "metadata": {"resourceVersion": self.rv}}


class _Res:
    kind, name = "Job", "jobs"

    def __init__(self, lists: List[List[Dict[str, Any]]]) -> None:
        self.lists, self.deleted, self.listed = list(lists), [], 0

    def get(self, **_kw: Any) -> _Listed:
        self.listed += 1
        return _Listed(self.lists.pop(0) if len(self.lists) > 1 else self.lists[0], str(self.listed))

    def delete(self, name: str, namespace: str, body: Dict[str, Any]) -> None:
        self.deleted.append((name, namespace, body["propagationPolicy"]))


class _Dyn:
    """Each watch plays the next script: events to yield, then maybe an exception."""

    def __init__(self, scripts: List[List[Any]]) -> None:
        self.scripts, self.versions = list(scripts), []

    def watch(self, _res: Any, resource_version: str, **_kw: Any) -> Iterator[Dict[str, Any]]:
        self.versions.append(resource_version)
        for step in self.scripts.pop(0):
            if isinstance(step, BaseException):
                raise step
            yield {"type": step}


@pytest.fixture(autouse=True)
def no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deletion.time, "sleep", lambda _s: None)


JOB = {"metadata": {"name": "keystone-db-sync"}}


def test_a_watch_cut_off_mid_stream_lists_again_and_sees_the_object_go() -> None:
    """A dropped connection is not a failed delete: list, watch on from there."""
    from urllib3.exceptions import ProtocolError
    res = _Res([[JOB], [JOB], []])
    dyn = _Dyn([["MODIFIED", ProtocolError("Connection broken: IncompleteRead(1695 bytes read)")],
                [ConnectionResetError(104, "Connection reset by peer")]])
    assert deletion.delete_and_wait(dyn, res, "keystone-db-sync", "openstack", "Foreground", timeout=60)
    assert res.deleted == [("keystone-db-sync", "openstack", "Foreground")]
    assert dyn.versions == ["1", "2"]  # the second watch starts where the re-list left it
    assert res.listed == 3


def test_a_watch_that_sees_deleted_returns_at_once() -> None:
    res = _Res([[JOB]])
    dyn = _Dyn([["MODIFIED", "DELETED"]])
    assert deletion.delete_and_wait(dyn, res, "keystone-db-sync", "openstack", "Background", timeout=60)
    assert res.listed == 1


def test_a_terminal_failure_of_the_watch_is_raised() -> None:
    res = _Res([[JOB]])
    dyn = _Dyn([[ValueError("a bug")]])
    with pytest.raises(ValueError):
        deletion.delete_and_wait(dyn, res, "keystone-db-sync", "openstack", "Foreground", timeout=60)


def test_nothing_to_delete_is_false() -> None:
    res = _Res([[]])
    assert not deletion.delete_and_wait(_Dyn([]), res, "keystone-db-sync", "openstack", "Foreground", timeout=60)
    assert res.deleted == []
