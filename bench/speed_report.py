"""bench/speed.py's arithmetic, without a cluster: the Job run times that sweep
a completion across a poller's cycle, where in the cycle a completion fell,
the issue's targets judged against the numbers, and the table. Tested in
tests/tooling."""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Tuple
from urllib.parse import urlsplit

# Where in the poller's cycle the Job completes, as a part of wait_sleep.
FRACTIONS = (0.0, 0.25, 0.5, 0.75)
QUICK_FRACTIONS = (0.0, 0.5)


def sweep(wait_sleep: float, fractions: Sequence[float], base: float) -> Dict[float, int]:
    """{fraction: the Job's run time in ms}: `base` seconds, plus that part of
    wait_sleep. Whatever the fixed delay between the waiter's first poll and
    the Job's start, these run times move the completion across the whole
    cycle, evenly."""
    if wait_sleep <= 0 or base < 0:
        raise ValueError("wait_sleep must be positive and base not negative")
    return {f: int(round((base + f * wait_sleep) * 1000)) for f in fractions}


def cycle_position(polls: Iterable[float], event: float, wait_sleep: float) -> Optional[float]:
    """Where `event` fell in the poller's cycle: the time since the last poll
    before it, as a part of wait_sleep (None: no poll before it). Polls are
    spaced by wait_sleep plus the request's own time, so this can pass 1 a little."""
    before = [p for p in polls if p <= event]
    if not before:
        return None
    return (event - max(before)) / wait_sleep


def request_kind(method: str, url: str) -> str:
    """A request as "VERB resource[/subresource]", VERB as the apiserver counts it
    (WATCH and LIST for a GET of a collection)."""
    path, query = urlsplit(url).path, urlsplit(url).query
    parts = [p for p in path.split("/") if p]
    if "namespaces" in parts and len(parts) > parts.index("namespaces") + 2:
        parts = parts[parts.index("namespaces") + 2:]  # the namespaced resource, its name, its subresource
    elif parts[:1] == ["api"]:
        parts = parts[2:]
    elif parts[:1] == ["apis"]:
        parts = parts[3:]
    resource = "/".join(parts[:1] + parts[2:3]) or path
    verb = method
    if method == "GET" and len(parts) == 1:
        verb = "WATCH" if "watch=true" in query.lower().split("&") else "LIST"
    return f"{verb} {resource}"


def by_kind(requests: Iterable[Tuple[float, str, str]], start: float, end: float) -> Dict[str, int]:
    """How many requests of each kind were sent within [start, end]."""
    out: Dict[str, int] = {}
    for when, method, url in requests:
        if start <= when <= end:
            kind = request_kind(method, url)
            out[kind] = out.get(kind, 0) + 1
    return dict(sorted(out.items()))


def median(values: Iterable[float]) -> Optional[float]:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def ratio(value: Optional[float], base: Optional[float]) -> Optional[float]:
    if value is None or not base:
        return None
    return value / base


def at_most(value: Optional[float], limit: float) -> Optional[bool]:
    """The target `value <= limit`; None when there is no value to judge."""
    return None if value is None else value <= limit


def constant(series: Sequence[float], slack: float = 0.0) -> Optional[bool]:
    """Whether a series stays within `slack` of itself (None: fewer than two points)."""
    if len(series) < 2:
        return None
    return max(series) - min(series) <= slack


def growth(per_size: Mapping[int, float], per: Mapping[int, float]) -> Optional[float]:
    """How much `per_size[n] / per[n]` grows from the smallest n to the largest
    (1.0: in proportion to `per`; None: fewer than two sizes, or a zero)."""
    sizes = sorted(n for n in per_size if n in per)
    if len(sizes) < 2:
        return None
    lo, hi = sizes[0], sizes[-1]
    if not per[lo] or not per[hi] or not per_size[lo]:
        return None
    return (per_size[hi] / per[hi]) / (per_size[lo] / per[lo])


@dataclass
class Row:
    """One line of the table: what this tree measured (lcm), the same for each
    anchor revision, the baseline it is held against, their ratio, and the
    issue's target with its verdict (met None: no target, or nothing to judge)."""

    item: str
    case: str
    lcm: str
    baseline: str = ""
    ratio: Optional[float] = None
    target: str = ""
    met: Optional[bool] = None
    anchors: Dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> Dict[str, Any]:
        return asdict(self)


def verdict(met: Optional[bool]) -> str:
    return "" if met is None else "met" if met else "**not met**"


def seconds(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.2f} s"


def table(rows: Sequence[Row], anchors: Sequence[str]) -> str:
    """The rows as a Markdown table, a column for each anchor revision."""
    head = ["item", "case", "lcm.openstack"] + [f"at {a}" for a in anchors] + ["baseline", "ratio", "target", "met"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r.item, r.case, r.lcm] + [r.anchors.get(a, "") for a in anchors] + [
            r.baseline, "" if r.ratio is None else f"{r.ratio:.2f}", r.target, verdict(r.met)]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


def summary(rows: Sequence[Row]) -> Tuple[int, int]:
    """(targets met, targets judged)."""
    judged = [r.met for r in rows if r.met is not None]
    return sum(1 for m in judged if m), len(judged)
