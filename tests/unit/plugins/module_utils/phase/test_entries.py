"""plugins/module_utils/phase/entries.py: the entries of status.objects as
written, and the operations a write carries for the objects changed since."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.phase.entries import ObjectEntries
from support import json_patch

A, B, C = ("Job", "a"), ("Job", "b"), ("ConfigMap", "c")


class _Built:
    """Entries built from a table of states, counting what was built."""

    def __init__(self, keys: List[Tuple[str, str]]) -> None:
        self.state = {k: "NotFound" for k in keys}
        self.extra: Dict[Any, Dict[str, Any]] = {}
        self.built: List[Tuple[str, str]] = []

    def __call__(self, key: Tuple[str, str]) -> Dict[str, Any]:
        self.built.append(key)
        return {"kind": key[0], "name": key[1], "state": self.state[key], **self.extra.get(key, {})}


def _written(keys: List[Tuple[str, str]]) -> Tuple[ObjectEntries, _Built, Dict[str, Any]]:
    entries, build = ObjectEntries(keys), _Built(keys)
    whole = entries.whole(build)
    entries.wrote_whole(whole)
    build.built.clear()
    return entries, build, {"status": {"objects": whole}}


def test_nothing_is_changed_before_the_list_is_written_whole() -> None:
    entries = ObjectEntries([A, B])
    entries.touch([A])
    assert entries.changes(_Built([A, B])) is None


def test_a_write_builds_and_carries_only_the_objects_touched() -> None:
    entries, build, phase = _written([A, B, C])
    build.state[B] = "InProgress"
    entries.touch([B])
    ops, changed = entries.changes(build)
    assert build.built == [B]
    assert ops == [{"op": "add", "path": "/status/objects/1/state", "value": "InProgress"}]
    entries.wrote(changed)
    assert json_patch.apply(phase, ops)["status"]["objects"] == entries.written == entries.whole(build)
    assert entries.changes(build) == ([], {})  # nothing touched since


def test_an_object_touched_but_back_as_written_carries_nothing() -> None:
    entries, build, _phase = _written([A, B])
    entries.touch([A])
    assert entries.changes(build)[0] == []


def test_fields_gone_are_removed_and_an_object_listed_twice_changes_in_both_places() -> None:
    entries, build, phase = _written([A, C, A])
    build.extra[C] = {"owned": True}
    entries.touch([C])
    ops, changed = entries.changes(build)
    entries.wrote(changed)
    phase = json_patch.apply(phase, ops)
    del build.extra[C]
    build.state[A] = "Current"
    entries.touch([A, C, ("Job", "unknown")])
    ops, changed = entries.changes(build)
    assert sorted(changed) == [0, 1, 2]
    assert {"op": "remove", "path": "/status/objects/1/owned"} in ops
    entries.wrote(changed)
    assert json_patch.apply(phase, ops)["status"]["objects"] == entries.whole(build)


def test_a_list_forgotten_is_written_whole_next() -> None:
    entries, build, _phase = _written([A, B])
    entries.forget()
    entries.touch([A])
    assert entries.changes(build) is None
