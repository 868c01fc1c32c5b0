# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plain-text tables, as the collection prints them: columns left-aligned,
two spaces apart, no trailing blanks (kubectl's own layout). One renderer
for the flow summary, the update status report and the callback's tables,
so that the three look alike."""

from __future__ import annotations

from typing import List, Optional, Sequence


def widths(rows: Sequence[Sequence[object]]) -> List[int]:
    """The width of each column: its widest cell."""
    return [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))] if rows else []


def aligned(rows: Sequence[Sequence[object]], column_widths: Optional[Sequence[int]] = None) -> List[str]:
    """One line a row. `column_widths` lines up tables printed apart (the
    callback's one table a service) as one; by default each column is as wide
    as its widest cell here."""
    column_widths = list(column_widths) if column_widths is not None else widths(rows)
    return ["  ".join(str(v).ljust(w) for v, w in zip(row, column_widths)).rstrip() for row in rows]
