# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Comparing service versions: compare(a, b) and satisfies(version, minimum).

The versions a site names are OpenStack series (2025.1, 2026.1), chart and
image versions (10.6, 11.4.2, 1.0.0-rc1): no one scheme, so none is parsed
strictly. A version is split into runs of digits and runs of letters; any
other character (`.`, `-`, `_`, `+`) only separates runs. Runs are compared
left to right:

- two numbers as integers: 2025.1 < 2025.2 < 2026.1, 1.9 < 1.10, 10.6 < 11;
- two words alphabetically, ignoring case: 1.0alpha < 1.0beta < 1.0rc1;
- a number is later than a word: 1.0.1 > 1.0rc1;
- a missing run counts as 0 against a number (1.0 == 1.0.0 < 1.0.1) and is
  later than a word, which marks a pre-release (1.0rc1 < 1.0);
- a leading `v` before a digit is dropped: v1.2 == 1.2.

Why not packaging.version or LooseVersion: the first refuses what is not
PEP 440 (a chart's 0.3.29+d3b6f0d0, an image tag), the second is gone from
Python 3.12 and compares 1.0 and 1.0rc1 the wrong way round.
"""

from __future__ import annotations

import re
from typing import List, Union

_RUN = re.compile(r"\d+|[A-Za-z]+")
Run = Union[int, str]


def runs(version: str) -> List[Run]:
    """The runs of `version`, numbers as int and words in lower case."""
    text = str(version).strip()
    if len(text) > 1 and text[0] in "vV" and text[1].isdigit():
        text = text[1:]
    return [int(r) if r.isdigit() else r.lower() for r in _RUN.findall(text)]


def _order(a: Run, b: Run) -> int:
    if isinstance(a, int) and isinstance(b, int) or isinstance(a, str) and isinstance(b, str):
        return (a > b) - (a < b)  # type: ignore[operator]
    return 1 if isinstance(a, int) else -1  # a number is later than a word


def _missing_against(run: Run) -> int:
    """How a missing run compares with `run`: as 0 against a number, later than a word."""
    return _order(0, run) if isinstance(run, int) else 1


def compare(a: str, b: str) -> int:
    """-1 when version `a` is earlier than `b`, 0 when they are the same
    version, 1 when `a` is later (see the module docstring for the rules)."""
    left, right = runs(a), runs(b)
    for i in range(max(len(left), len(right))):
        if i >= len(left):
            result = _missing_against(right[i])
        elif i >= len(right):
            result = -_missing_against(left[i])
        else:
            result = _order(left[i], right[i])
        if result:
            return result
    return 0


def satisfies(version: str, minimum: str) -> bool:
    """Whether `version` is `minimum` or later; any version satisfies an empty minimum."""
    return not str(minimum or "").strip() or compare(version, minimum) >= 0
