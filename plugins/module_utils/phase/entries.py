# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The entries of a Phase's status.objects as last written, and the objects
changed since: what the next write carries (phase/status.py).

A phase of N objects hears O(N) changes while it waits, and writes what
changed at most every INTERVAL. Rebuilding every entry (its message masked
for credentials) and comparing it with the one written, at every write, cost
O(N) a write; only the entries of the objects that changed are built and
compared, so a write costs what it carries.

No write carries more than about `budget` bytes of entries: the list is
written in parts when a run starts (its first part replaces the list, the
rest are appended), and a change of many objects at once (a wave's
ownership decisions, 200 Jobs completing within one interval) goes out in as
many writes as it takes. A phase of 200 objects then writes about 32 KiB of
entries in all, in writes of a few KiB, instead of one write of the whole list.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.crds.phase import Phase

Key = Tuple[str, str]
Entry = Dict[str, Any]
Ops = List[Dict[str, Any]]
# Bytes of entries one write carries, at most (one entry may exceed it alone).
BUDGET = 4096


class ObjectEntries:
    """status.objects of one Phase: one entry an object, in the run's order."""

    def __init__(self, order: Sequence[Key], budget: int = BUDGET) -> None:
        self.order = list(order)
        self.budget = budget
        # Where each object's entry is in the list (an object listed twice has two).
        self.positions: Dict[Key, List[int]] = {}
        for index, key in enumerate(self.order):
            self.positions.setdefault(key, []).append(index)
        # The first entries of the list, as the Phase holds them; None until
        # this run replaced the list (first()).
        self.written: Optional[List[Entry]] = None
        self.touched: Set[Key] = set()  # objects whose entry may have changed since
        self._carried: Set[Key] = set()  # the touched objects the last changes() carried

    def touch(self, keys: Iterable[Key]) -> None:
        """These objects' states or ownership changed: their entries are to be compared."""
        self.touched.update(k for k in keys if k in self.positions)

    @property
    def started(self) -> bool:
        """Whether the list the Phase holds is this run's (first() written)."""
        return self.written is not None

    def pending(self) -> bool:
        """Whether a write is still owed: the list not whole yet, or an entry changed."""
        if self.written is None or len(self.written) < len(self.order):
            return True
        return bool(self.touched)

    def whole(self, build: Callable[[Key], Entry]) -> List[Entry]:
        """Every entry, as the list is to read in the end."""
        return [build(k) for k in self.order]

    def first(self, build: Callable[[Key], Entry]) -> List[Entry]:
        """The beginning of the list, within the budget, for the write that
        replaces the list the Phase holds (wrote_first once written)."""
        entries: List[Entry] = []
        size = 0
        for key in self.order:
            entry = build(key)
            cost = _size(entry)
            if entries and size + cost > self.budget:
                break
            entries.append(entry)
            size += cost
        return entries

    def wrote_first(self, entries: List[Entry]) -> None:
        """The list now starts with these entries (each built as it is now);
        the rest are appended as they are when their turn comes."""
        self.written = list(entries)
        self.touched.clear()

    def changes(self, build: Callable[[Key], Entry]) -> Tuple[Ops, Dict[int, Entry]]:
        """JSON Patch operations, within the budget: the written entries of
        the touched objects turned into their current ones, then the entries
        not written yet appended; with the entries they set, by position."""
        written = self.written or []
        ops: Ops = []
        changed: Dict[int, Entry] = {}
        self._carried = set()
        size = 0
        for key in sorted(self.touched, key=lambda k: self.positions[k][0]):
            listed = [i for i in self.positions[key] if i < len(written)]
            if not listed:
                continue
            entry = build(key)
            key_ops = [op for i in listed for op in entry_ops(i, written[i], entry)]
            cost = _size(key_ops)
            if ops and size + cost > self.budget:
                break
            ops += key_ops
            size += cost
            self._carried.add(key)
            changed.update((i, entry) for i in listed)
        index = len(written)
        while index < len(self.order) and size < self.budget:
            entry = build(self.order[index])
            op = {"op": "add", "path": "/status/objects/-", "value": entry}
            cost = _size(op)
            if ops and size + cost > self.budget:
                break
            ops.append(op)
            size += cost
            changed[index] = entry
            index += 1
        return ops, changed

    def last(self, changed: Dict[int, Entry]) -> bool:
        """Whether the write of changes() that set `changed` leaves nothing owed (pending() after wrote())."""
        whole = max([len(self.written or [])] + [i + 1 for i in changed])
        return whole >= len(self.order) and all(p in changed for k in self.touched - self._carried
                                                for p in self.positions[k] if p < whole)

    def wrote(self, entries: Dict[int, Entry]) -> None:
        """These entries are what the Phase now holds."""
        written = self.written if self.written is not None else []
        for index in sorted(entries):
            if index < len(written):
                written[index] = entries[index]
            else:
                written.append(entries[index])
        self.written = written
        # Still to compare: the objects not carried whose written entries were
        # not all built by this write (one not listed yet is built as it is
        # when it is appended).
        self.touched = {k for k in self.touched - self._carried
                        if not all(p in entries for p in self.positions[k] if p < len(written))}
        self._carried = set()

    @staticmethod
    def guarded(ops: Ops, phase: Phase) -> Ops:
        """An append sent again after a blip would list its entries twice: it
        holds only on the Phase as this run last saw it."""
        version = phase["metadata"].get("resourceVersion")
        if version and any(o["path"].endswith("/-") for o in ops):
            return [{"op": "test", "path": "/metadata/resourceVersion", "value": version}] + ops
        return ops

    @staticmethod
    def status_ops(status: Dict[str, Any], was: Dict[str, Any]) -> Ops:
        """JSON Patch operations doing what the merge patch of `status` does on `was`,
        the run's end written with its last changes: a None removes the field (where it is)."""
        return [{"op": "add", "path": f"/status/{k}", "value": v} if v is not None else {"op": "remove", "path": f"/status/{k}"}
                for k, v in status.items() if v is not None or k in was]

    def forget(self) -> None:
        """The list is not as written (edited by hand, or an append sent
        twice): the next write replaces it."""
        self.written = None


def entry_ops(index: int, was: Entry, now: Entry) -> Ops:
    """JSON Patch operations turning one written entry into the current one."""
    ops: Ops = [{"op": "add", "path": f"/status/objects/{index}/{field}", "value": value}
                for field, value in now.items() if was.get(field) != value]
    return ops + [{"op": "remove", "path": f"/status/objects/{index}/{field}"} for field in was if field not in now]


def _size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":")))
