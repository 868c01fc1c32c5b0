"""plugins/module_utils/common/tables.py: the one table layout."""

from __future__ import annotations

from ansible_collections.lcm.openstack.plugins.module_utils.common import tables


def test_columns_are_as_wide_as_their_widest_cell_and_lines_end_without_blanks() -> None:
    rows = [("PHASE", "RESULT", "DURATION"), ("install", "Succeeded", "1m2s"), ("trafficrollout", "-", "")]
    assert tables.aligned(rows) == [
        "PHASE           RESULT     DURATION",
        "install         Succeeded  1m2s",
        "trafficrollout  -",
    ]


def test_given_widths_line_up_tables_printed_apart() -> None:
    both = [("TYPE", "RESULT"), ("install", "Succeeded"), ("uninstall", "deleted")]
    same = tables.widths(both)
    assert same == [9, 9]
    assert tables.aligned(both[:2], same)[0] == "TYPE       RESULT"
    assert tables.aligned([both[0], both[2]], same)[0] == "TYPE       RESULT"
    assert tables.widths([]) == []
