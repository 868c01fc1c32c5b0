"""plugins/module_utils/phase/entries.py: the entries of status.objects as
written, and the operations a write carries for the objects changed since,
within a budget of bytes a write."""

from __future__ import annotations

import json
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


def _written(keys: List[Tuple[str, str]], budget: int = 4096) -> Tuple[ObjectEntries, _Built, Dict[str, Any]]:
    entries, build = ObjectEntries(keys, budget), _Built(keys)
    first = entries.first(build)
    entries.wrote_first(first)
    phase = {"status": {"objects": first}}
    while entries.pending():
        ops, changed = entries.changes(build)
        phase = json_patch.apply(phase, ops)
        entries.wrote(changed)
    build.built.clear()
    return entries, build, phase


def test_the_list_is_this_run_once_its_first_part_is_written() -> None:
    entries = ObjectEntries([A, B])
    assert not entries.started and entries.pending()
    entries.wrote_first(entries.first(_Built([A, B])))
    assert entries.started and not entries.pending()


def test_a_list_over_the_budget_goes_out_in_parts_each_within_it() -> None:
    keys = [("Job", f"job-{n:03d}") for n in range(40)]
    entries, build, phase = _written(keys, budget=300)
    assert phase["status"]["objects"] == entries.whole(build)
    parts = ObjectEntries(keys, 300)
    first = parts.first(build)
    parts.wrote_first(first)
    sizes = [len(json.dumps(first))]
    while parts.pending():
        ops, changed = parts.changes(build)
        sizes.append(len(json.dumps(ops)))
        parts.wrote(changed)
    assert len(sizes) > 5 and max(sizes) <= 300 + 60  # an entry is about 50 bytes


def test_many_changes_at_once_go_out_in_parts_and_none_is_lost() -> None:
    keys = [("Job", f"job-{n:03d}") for n in range(40)]
    entries, build, phase = _written(keys, budget=300)
    for key in keys:
        build.state[key] = "Current"
    entries.touch(keys)
    writes = 0
    while entries.pending():
        ops, changed = entries.changes(build)
        assert len(json.dumps(ops)) <= 300 + 60
        phase = json_patch.apply(phase, ops)
        entries.wrote(changed)
        writes += 1
    assert writes > 3 and phase["status"]["objects"] == entries.whole(build)


def test_an_object_touched_before_its_entry_is_appended_is_appended_as_it_is() -> None:
    keys = [("Job", f"job-{n:03d}") for n in range(20)]
    entries, build = ObjectEntries(keys, 200), _Built(keys)
    first = entries.first(build)
    entries.wrote_first(first)
    phase = {"status": {"objects": first}}
    build.state[keys[-1]] = "Current"
    entries.touch([keys[-1]])
    while entries.pending():
        ops, changed = entries.changes(build)
        phase = json_patch.apply(phase, ops)
        entries.wrote(changed)
    assert phase["status"]["objects"][-1]["state"] == "Current"
    assert phase["status"]["objects"] == entries.whole(build)


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
    assert not entries.pending()


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


def test_a_list_forgotten_is_written_from_its_start_next() -> None:
    entries, build, _phase = _written([A, B])
    entries.forget()
    entries.touch([A])
    assert not entries.started and entries.pending()


def test_last_says_before_the_write_whether_it_leaves_anything_owed() -> None:
    """What the end's single write asks (phase/status.py): last() is pending()
    after wrote(), known before the write is sent."""
    keys = [("Job", f"j{n:02d}") for n in range(12)] + [A, A]  # one object listed twice
    for budget in (60, 200, 400, 4096):
        for touched in ([], keys[:1], keys[:5], keys, [A], keys[10:]):
            entries, build = ObjectEntries(keys, budget), _Built(keys)
            first = entries.first(build)
            entries.wrote_first(first)
            for key in touched:
                build.state[key] = "Current"
            entries.touch(touched)
            steps = 0
            while True:
                changed = entries.changes(build)[1]
                said = entries.last(changed)
                entries.wrote(changed)
                steps += 1
                assert said == (not entries.pending()), (budget, touched, steps)
                if said:
                    break
