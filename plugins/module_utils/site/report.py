# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The table that ends a site run: one row a service, in dependency order,
and a line of totals. The playbooks gather each service's outcome as a plain
mapping (service, level, flow, result, versions, duration, waited,
waited_for, message); this only lays them out."""

from __future__ import annotations

from typing import Any, Iterable, List, Mapping

from ansible_collections.lcm.openstack.plugins.module_utils.common.tables import aligned
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import duration_or_dash

HEADER = ("LEVEL", "SERVICE", "FLOW", "RESULT", "VERSIONS", "DURATION", "WAITED FOR")


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def _waited(outcome: Mapping[str, Any]) -> str:
    names = [str(n) for n in outcome.get("waited_for") or []]
    if not names:
        return "-"
    return f"{', '.join(names)} ({duration_or_dash(_number(outcome.get('waited')))})"


def _row(outcome: Mapping[str, Any]) -> List[str]:
    return [str(outcome.get("level", "")), str(outcome.get("service", "")), str(outcome.get("flow") or "-"),
            str(outcome.get("result") or "-"), str(outcome.get("versions") or "-"),
            duration_or_dash(_number(outcome.get("duration"))), _waited(outcome)]


def summary_lines(outcomes: Iterable[Mapping[str, Any]]) -> List[str]:
    """The table's lines; a failed service's reason under the table."""
    ordered = sorted(outcomes, key=lambda o: (int(_number(o.get("level"))), str(o.get("service", ""))))
    lines = aligned([HEADER] + [_row(o) for o in ordered])
    counts: dict = {}
    for outcome in ordered:
        counts[outcome.get("result") or "-"] = counts.get(outcome.get("result") or "-", 0) + 1
    lines.append(f"{len(ordered)} services: " + ", ".join(f"{n} {r}" for r, n in sorted(counts.items())))
    lines.extend(f"{o.get('service')}: {o.get('message')}" for o in ordered if o.get("message"))
    return lines
