# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The entries of a Phase's status.objects as last written, and the objects
changed since: what the next write carries (phase/status.py).

A phase of N objects hears O(N) changes while it waits, and writes what
changed at most every INTERVAL. Rebuilding every entry (its message masked
for credentials) and comparing it with the one written, at every write, cost
O(N) a write; only the entries of the objects that changed are built and
compared, so a write costs what it carries.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

Key = Tuple[str, str]
Entry = Dict[str, Any]
Ops = List[Dict[str, Any]]


class ObjectEntries:
    """status.objects of one Phase: one entry an object, in the run's order."""

    def __init__(self, order: Sequence[Key]) -> None:
        self.order = list(order)
        # Where each object's entry is in the list (an object listed twice has two).
        self.positions: Dict[Key, List[int]] = {}
        for index, key in enumerate(self.order):
            self.positions.setdefault(key, []).append(index)
        self.written: List[Entry] = []  # as the Phase holds them; [] until written whole
        self.touched: Set[Key] = set()  # objects whose entry may have changed since

    def touch(self, keys: Iterable[Key]) -> None:
        """These objects' states or ownership changed: their entries are to be compared."""
        self.touched.update(k for k in keys if k in self.positions)

    def whole(self, build: Callable[[Key], Entry]) -> List[Entry]:
        """Every entry, for a write of the whole list."""
        return [build(k) for k in self.order]

    def changes(self, build: Callable[[Key], Entry]) -> Optional[Tuple[Ops, Dict[int, Entry]]]:
        """JSON Patch operations turning the written entries of the touched
        objects into their current ones, with those entries by position;
        None while the list has not been written whole."""
        if len(self.written) != len(self.order):
            return None
        changed: Dict[int, Entry] = {}
        for key in self.touched:
            entry = build(key)
            for index in self.positions[key]:
                changed[index] = entry
        ops: Ops = []
        for index in sorted(changed):
            ops += entry_ops(index, self.written[index], changed[index])
        return ops, changed

    def wrote(self, entries: Dict[int, Entry]) -> None:
        """These entries are what the Phase now holds."""
        for index, entry in entries.items():
            self.written[index] = entry
        self.touched.clear()

    def wrote_whole(self, entries: List[Entry]) -> None:
        self.written = list(entries)
        self.touched.clear()

    def forget(self) -> None:
        """The list is not as written (edited by hand): the next write is whole."""
        self.written = []


def entry_ops(index: int, was: Entry, now: Entry) -> Ops:
    """JSON Patch operations turning one written entry into the current one."""
    ops: Ops = [{"op": "add", "path": f"/status/objects/{index}/{field}", "value": value}
                for field, value in now.items() if was.get(field) != value]
    return ops + [{"op": "remove", "path": f"/status/objects/{index}/{field}"} for field in was if field not in now]
