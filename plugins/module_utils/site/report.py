# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The table that ends a site run: one row a service, in dependency order,
and a line of totals. The playbooks gather each service's outcome as a plain
mapping of what the run saw (service, level, flow, started, failure, the
records the calls that ended its flow returned, current_version,
target_version, duration, waited, waited_for); its result and versions are
decided here (outcome), not in the playbook."""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping

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


NOTHING = "Nothing to do"


def result(outcome: Mapping[str, Any]) -> str:
    """Failed when its flow failed; a flow that found nothing to do started
    none; otherwise the flow's state in the record as the call that ended
    the flow returned it (a greenfield's traffic rollout ends it, else
    service_lifecycle's end: the first of `ended` that holds one), Succeeded
    when none says."""
    if outcome.get("failure"):
        return "Failed"
    if not _true(outcome.get("started")):
        return NOTHING
    for record in outcome.get("ended") or []:
        state = ((record or {}).get("flow") or {}).get("state") if isinstance(record, Mapping) else None
        if state:
            return str(state)
    return "Succeeded"


def versions(outcome: Mapping[str, Any]) -> str:
    """`current -> target`, or the one version when they are the same or one is unknown."""
    seen: List[str] = []
    for version in (outcome.get("current_version"), outcome.get("target_version")):
        if version and str(version) not in seen:
            seen.append(str(version))
    return " -> ".join(seen)


def outcome_of(raw: Mapping[str, Any]) -> Dict[str, Any]:
    """A service's outcome with its result, versions and message decided
    (a mapping that carries a result already is taken as it is)."""
    out = dict(raw)
    if "result" not in raw:
        out.update(result=result(raw), versions=versions(raw), message=str(raw.get("failure") or ""))
    return out


def _true(value: Any) -> bool:
    return value is True or str(value).strip().lower() in ("true", "yes", "1")


def _row(outcome: Mapping[str, Any]) -> List[str]:
    return [str(outcome.get("level", "")), str(outcome.get("service", "")), str(outcome.get("flow") or "-"),
            str(outcome.get("result") or "-"), str(outcome.get("versions") or "-"),
            duration_or_dash(_number(outcome.get("duration"))), _waited(outcome)]


def summary_lines(outcomes: Iterable[Mapping[str, Any]]) -> List[str]:
    """The table's lines; a failed service's reason under the table."""
    ordered = sorted((outcome_of(o) for o in outcomes),
                     key=lambda o: (int(_number(o.get("level"))), str(o.get("service", ""))))
    lines = aligned([HEADER] + [_row(o) for o in ordered])
    counts: dict = {}
    for outcome in ordered:
        counts[outcome.get("result") or "-"] = counts.get(outcome.get("result") or "-", 0) + 1
    lines.append(f"{len(ordered)} services: " + ", ".join(f"{n} {r}" for r, n in sorted(counts.items())))
    lines.extend(f"{o.get('service')}: {o.get('message')}" for o in ordered if o.get("message"))
    return lines
