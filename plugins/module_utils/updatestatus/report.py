# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The update status for people, from the UpdateStatus's status alone.

One line per site first, when there are any (how many services are done,
when the last should be, what waits, what failed); then one section per
service that is updating or Degraded, then the health table
(SINCE, LEVEL, IMPACT, MESSAGE). `details` adds a table of each service's
phases (phases), each insight's description and reference (health), or both
(all). Times are shown relative to `now` (default: the status's observedAt).
"""

from __future__ import annotations

from datetime import datetime
from typing import List, Optional, Sequence

from ansible_collections.lcm.openstack.plugins.module_utils.crds.update_status import (
    InsightEntry, ServiceEntry, ServicePhase, ServiceSite, SiteEntry, UpdateStatusStatus, Versions,
)
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.base import (
    INFO,
)
from ansible_collections.lcm.openstack.plugins.module_utils.common.tables import aligned
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import duration, parse_time, seconds, utcnow

DETAILS = ("none", "phases", "health", "all")
LABEL_WIDTH = 17  # "Target Version:  " and the values after it line up
QUIET = "No service is updating."

SITE_WAITING_SHOWN = 3  # waiting services named on a site's line


def report(status: UpdateStatusStatus, details: str = "none", now: Optional[datetime] = None) -> str:
    if details not in DETAILS:
        raise ValueError(f"details must be one of {', '.join(DETAILS)}, not {details!r}")
    now = now or parse_time(status.get("observedAt")) or utcnow()
    observed = parse_time(status.get("observedAt")) or now
    services = status.get("services") or []
    insights = status.get("insights") or []
    shown = [s for s in services if s.get("assessment") == "Degraded" or _updating(s)]
    blocks: List[List[str]] = [[site_line(s, now) for s in status.get("sites") or []]]
    if not any(_updating(s) for s in services):
        blocks.append([QUIET])
    for entry in shown:
        blocks.append(_section(entry, details in ("phases", "all"), now, observed))
    if shown or insights:
        blocks.append(health(insights, details in ("health", "all"), now))
    return "\n\n".join("\n".join(block) for block in blocks if block)


def site_line(site: SiteEntry, now: datetime) -> str:
    """`site example: 3/5 services done (60%), ETA 05:12:30Z; waiting: placement for keystone (Installing); failed: -`"""
    total, completion = site.get("services", 0), site.get("completion", 0)
    eta = parse_time(site.get("estimatedCompletionAt"))
    when = "-" if eta is None else eta.strftime("%H:%M:%SZ") + (" (overdue)" if eta < now else "")
    # A large site waits on many at once: the first few, and how many more
    # (each service's own section says what it waits for).
    listed = site.get("waiting") or []
    waiting = " | ".join(f"{w.get('service')} for {w.get('for')}" for w in listed[:SITE_WAITING_SHOWN]) or "-"
    if len(listed) > SITE_WAITING_SHOWN:
        waiting += f" | {len(listed) - SITE_WAITING_SHOWN} more"
    return (f"site {site.get('name')}: {site.get('done', 0)}/{total} services done ({completion}%), ETA {when}; "
            f"waiting: {waiting}; failed: {', '.join(site.get('failed') or []) or '-'}")


def _updating(entry: ServiceEntry) -> bool:
    """A flow runs: it has a planned end, or has not ended."""
    return bool(entry.get("estimatedCompletionAt")) or (bool(entry.get("startedAt")) and not entry.get("completedAt"))


def _section(entry: ServiceEntry, with_phases: bool, now: datetime, observed: datetime) -> List[str]:
    phases = entry.get("phases") or []
    done = sum(1 for p in phases if p.get("state") == "Succeeded")
    running = _updating(entry)
    lines = [f"= {entry.get('name')} ({entry.get('namespace')}) =",
             _line("Assessment", entry.get("assessment", "")),
             _line("Flow", f"{entry.get('flow', '-')}" + ("" if running else " (ended)")),
             _line("Service State", entry.get("state") or "-"),
             *_site(entry.get("site")),
             _line("Target Version", _versions(entry.get("versions") or {})),
             _line("Current Phase", entry.get("currentPhase") or "none"),
             _line("Completion", f"{entry.get('completion', 0)}% ({done} of {len(phases)} phases)"),
             _line("Duration", _duration(entry, running, now))]
    if phases:
        lines.append(_line("Phases", ", ".join(
            " ".join([p.get("type", "?"), p.get("state", "Pending")]
                     + ([_phase_took(p, now, observed)] if p.get("state") != "Pending" else []))
            for p in phases)))
    if with_phases and phases:
        rows = [("TYPE", "STATE", "DURATION", "PHASE")]
        rows += [(p.get("type", "?"), p.get("state", "Pending"),
                  _phase_took(p, now, observed) if p.get("state") != "Pending" else "-", p.get("name") or "-")
                 for p in phases]
        lines += [""] + aligned(rows)
    return lines


def health(insights: Sequence[InsightEntry], with_details: bool, now: datetime) -> List[str]:
    """The health table; with details, each insight's resources, description
    and reference under its row."""
    lines = ["= Update Health ="]
    if not insights:
        return lines + aligned([("SINCE", "LEVEL", "IMPACT", "MESSAGE"), ("-", INFO, "None", "all healthy")])
    rows = [("SINCE", "LEVEL", "IMPACT", "MESSAGE")]
    for insight in insights:
        impact = insight.get("impact") or {}
        started = parse_time(insight.get("startedAt"))
        rows.append((duration(seconds(now - started)) if started else "-", impact.get("level", "?"),
                     impact.get("type", "?"), impact.get("summary", "")))
    formatted = aligned(rows)
    if not with_details:
        return lines + formatted
    lines.append(formatted[0])
    for row, insight in zip(formatted[1:], insights):
        lines.append(row)
        lines += _insight_details(insight)
    return lines


def _insight_details(insight: InsightEntry) -> List[str]:
    scope, impact = insight.get("scope") or {}, insight.get("impact") or {}
    out = []
    resources = [f"{r.get('kind')}/{r.get('name')}" for r in scope.get("resources") or []]
    if scope.get("service"):
        out.append(f"  Service:     {scope['service']} ({scope.get('namespace')})")
    if resources:
        out.append(f"  Resources:   {', '.join(resources)}")
    if impact.get("description"):
        text = str(impact["description"]).splitlines()
        out += [f"  Description: {text[0]}"] + [f"               {t}" for t in text[1:]]
    reference = (insight.get("remediation") or {}).get("reference")
    if reference:
        out.append(f"  Reference:   {reference}")
    return out


def _site(site: Optional[ServiceSite]) -> List[str]:
    """The service's site, its level and what it waits for; nothing outside a site."""
    if not site:
        return []
    level = f", level {site['level']}" if site.get("level") is not None else ""
    waiting = f"; waiting for {site['waitingFor']}" if site.get("waitingFor") else ""
    return [_line("Site", f"{site.get('name')}{level}{waiting}")]


def _line(label: str, value: str) -> str:
    return f"{label + ':':<{LABEL_WIDTH}}{value}"


def _versions(versions: Versions) -> str:
    target, previous = versions.get("target"), versions.get("previous")
    text = target or "not known yet"
    return f"{text} (from {previous})" if previous and previous != target else str(text)


def _duration(entry: ServiceEntry, running: bool, now: datetime) -> str:
    started, completed = parse_time(entry.get("startedAt")), parse_time(entry.get("completedAt"))
    if started is None:
        return "-"
    text = duration(seconds((completed or now) - started))
    eta = parse_time(entry.get("estimatedCompletionAt"))
    if running and eta is not None:
        left = seconds(eta - now)
        text += f" (Est. Time Remaining: {duration(left)})" if left > 0 else " (Est. Time Remaining: overdue)"
    return text


def _phase_took(phase: ServicePhase, now: datetime, observed: datetime) -> str:
    """A phase's duration; a running one's grows by the time since observedAt."""
    took = phase.get("durationSeconds")
    if took is None:
        return "-"
    if phase.get("state") == "Running":
        took += max(0.0, seconds(now - observed))
    return duration(took)
