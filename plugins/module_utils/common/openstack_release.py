# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OpenStack release series and the upgrade paths the projects support.

Since 2023.1 an OpenStack release is named by its year and its place in the
year, `YYYY.1` (spring) and `YYYY.2` (autumn). Every `.1` release is a SLURP
(Skip Level Upgrade Release Process) release. The projects test and support:

- N -> N+1: 2025.1 -> 2025.2 -> 2026.1;
- SLURP -> SLURP: 2025.1 -> 2026.1, skipping the .2 between.

Anything else goes through the releases between, and a move back is not an
upgrade at all (only a rollback returns a service to where it was). A version
that is not `YYYY.N` (mariadb's 10.11, a node agent's chart version) is no
OpenStack release and is not checked here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

# The first release named by the year; before it (Zed and older) there were
# no SLURP releases and no YYYY.N names.
FIRST_YEAR = 2023
_SERIES = re.compile(r"^(?P<year>\d{4})\.(?P<half>[12])$")

Series = Tuple[int, int]


@dataclass(frozen=True)
class PathCheck:
    """Whether moving from `current` to `target` is a supported upgrade."""

    supported: bool
    checked: bool  # False when either side is no OpenStack release
    reason: str  # one sentence, for the plan and the refusal
    kind: str = ""  # N -> N+1 | SLURP -> SLURP | same | back | unsupported | unchecked
    through: List[str] = field(default_factory=list)  # the releases to pass through, in order


def series(version: str) -> Optional[Series]:
    """(year, half) of an OpenStack release `YYYY.1` or `YYYY.2`, else None."""
    found = _SERIES.match(str(version or "").strip())
    if not found or int(found["year"]) < FIRST_YEAR:
        return None
    return int(found["year"]), int(found["half"])


def name(release: Series) -> str:
    return f"{release[0]}.{release[1]}"


def is_slurp(release: Series) -> bool:
    return release[1] == 1


def _next(release: Series) -> Series:
    year, half = release
    return (year, 2) if half == 1 else (year + 1, 1)


def _one_step(current: Series, target: Series) -> bool:
    """N -> N+1, or SLURP -> the next SLURP."""
    return target == _next(current) or (is_slurp(current) and target == (current[0] + 1, 1))


def _shortest(current: Series, target: Series) -> List[Series]:
    """The supported releases from `current` (excluded) to `target` (included),
    fewest first: to the next SLURP, then SLURP to SLURP, then on by one."""
    path: List[Series] = []
    here = current
    while here != target:
        if is_slurp(here) and (here[0] + 1, 1) <= target:
            here = (here[0] + 1, 1)
        else:
            here = _next(here)
        path.append(here)
    return path


def check(current: str, target: str) -> PathCheck:
    """Whether the jump from the running `current` to `target` is one the
    projects support; when not, the releases to pass through."""
    now, wanted = series(current), series(target)
    if now is None or wanted is None:
        which = target if wanted is None else current
        return PathCheck(True, False, f"{which or 'no version'} is not an OpenStack release (YYYY.1 or YYYY.2): "
                                      "its upgrade path is not checked", "unchecked")
    if now == wanted:
        return PathCheck(True, True, f"already at {name(now)}", "same")
    if wanted < now:
        return PathCheck(False, True, f"{name(now)} -> {name(wanted)} moves back: only the rollback flow "
                                      "returns a service to an earlier release", "back")
    if _one_step(now, wanted):
        kind = "SLURP -> SLURP" if wanted[0] > now[0] and is_slurp(now) and wanted[1] == 1 and wanted != _next(now) \
            else "N -> N+1"
        return PathCheck(True, True, f"{name(now)} -> {name(wanted)} is a supported upgrade ({kind})", kind)
    through = [name(r) for r in _shortest(now, wanted)[:-1]]
    return PathCheck(False, True, f"{name(now)} -> {name(wanted)} is not a supported upgrade: OpenStack upgrades "
                                  f"go N -> N+1 or SLURP -> SLURP (YYYY.1 -> YYYY+1.1); pass through "
                                  f"{', then '.join(through)} first", "unsupported", through)
