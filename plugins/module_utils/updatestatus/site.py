# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sites in the UpdateStatus: which site a service belongs to, and how far each site's run is.

A site run (playbooks/site.yml) starts every service's flow at once, each
waiting for its dependencies, and marks their ServiceLifecycles (the site
label, the level, the run, the expected seconds). Read back from the records
alone, so the status says of a site what it says of a service: how far, what
waits, what failed, when it should end. Rules: docs/update-status.md, "Sites".
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.crds.service_lifecycle import ServiceLifecycle, lifecycle_flow, lifecycle_spec, lifecycle_status
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import (
    ANNOTATION_SITE_EXPECTED, ANNOTATION_SITE_LEVEL, ANNOTATION_SITE_RUN, DEPENDENCIES_FAILED, DEPENDENCIES_READY, LABEL_SITE,
)
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import format_time, parse_time, seconds
from ansible_collections.lcm.openstack.plugins.module_utils.site.graph import critical_path
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.base import (
    annotations, condition, labels, name_of, namespace_of,
)

Key = Tuple[str, str]  # (namespace, name)
AT_REST = ("Operational", "Removed")


@dataclass(frozen=True)
class Member:
    """A ServiceLifecycle of a site, as far as the site's status goes."""

    key: Key
    site: str
    level: Optional[int]
    run: Optional[datetime]  # the start of the site run that last touched it
    expected: int  # seconds its flow is expected to take
    state: str
    flow: Mapping[str, Any]
    waiting: str  # what it waits for, '' when it does not
    started: Optional[datetime]  # when its running flow's work started; None: not started
    depends: Tuple[Key, ...]


SiteOf = Dict[Key, Dict[str, Any]]  # each member's `site`, by (namespace, name)


def site_view(lifecycles: Sequence[ServiceLifecycle], now: datetime) -> Tuple[SiteOf, List[Dict[str, Any]]]:
    """What the status takes, in one call: each member's `site` (for its
    entry in status.services) by (namespace, name), and status.sites."""
    members = [m for m in map(member, lifecycles) if m is not None]
    return {m.key: entry(m) for m in members}, sites(members, now)


def member(lifecycle: ServiceLifecycle) -> Optional[Member]:
    """The record as a site member; None without the site label."""
    site = labels(lifecycle).get(LABEL_SITE)
    if not site:
        return None
    notes, status, namespace = annotations(lifecycle), lifecycle_status(lifecycle), namespace_of(lifecycle)
    depends = [d for d in lifecycle_spec(lifecycle).get("dependsOn") or [] if isinstance(d, str)]
    return Member((namespace, name_of(lifecycle)), str(site), _integer(notes.get(ANNOTATION_SITE_LEVEL)),
                  parse_time(notes.get(ANNOTATION_SITE_RUN)), max(0, _integer(notes.get(ANNOTATION_SITE_EXPECTED)) or 0),
                  str(status.get("state") or ""), status.get("flow") or {}, waiting_for(lifecycle),
                  _work_started(lifecycle), tuple(_dependency(d, namespace) for d in depends))


def waiting_for(lifecycle: ServiceLifecycle) -> str:
    """What the flow waits for: its DependenciesReady message without the
    leading 'waiting for ', while that condition is False. A dependency that
    failed the flow is not waited for any more: the flow ended."""
    cond = condition(lifecycle, DEPENDENCIES_READY) or {}
    if cond.get("status") != "False" or cond.get("reason") in DEPENDENCIES_FAILED:
        return ""
    text = str(cond.get("message") or "").strip()
    return (text[len("waiting for "):] if text.lower().startswith("waiting for ") else text) or "its dependencies"


def entry(svc: Member) -> Dict[str, Any]:
    """The `site` of the member's entry in status.services."""
    out: Dict[str, Any] = {"name": svc.site}
    if svc.level is not None:
        out["level"] = svc.level
    if svc.waiting:
        out["waitingFor"] = svc.waiting
    return out


def sites(members: Sequence[Member], now: datetime) -> List[Dict[str, Any]]:
    """One entry per site, sorted by name (the rules in docs/update-status.md)."""
    out = []
    for name in sorted({m.site for m in members}):
        mine = sorted((m for m in members if m.site == name), key=lambda m: m.key)
        run = max((m.run for m in mine if m.run), default=None)
        done = {m.key for m in mine if is_done(m, run)}
        named = {m.key: _name(m, mine) for m in mine}
        site: Dict[str, Any] = {
            "name": name, "services": len(mine), "levels": len({m.level for m in mine if m.level is not None}),
            "done": len(done), "completion": 100 * len(done) // len(mine),
            "waiting": [{"service": named[m.key], "namespace": m.key[0], "for": m.waiting} for m in mine if m.waiting],
            "failed": [named[m.key] for m in mine if _failed(m, run)]}
        if run is not None:
            site["runStartedAt"] = format_time(run)
        if len(done) < len(mine):
            eta = estimated_completion([m for m in mine if m.key not in done], mine, run, now)
            if eta is not None:
                site["estimatedCompletionAt"] = format_time(eta)
        out.append(site)
    return out


def is_done(svc: Member, run: Optional[datetime]) -> bool:
    """At rest (flow not running, Operational or Removed), and, when the
    latest run touched it, by a flow that ended since that run started: an
    earlier flow's end is not this run's work."""
    if svc.flow.get("state") == "Running" or svc.state not in AT_REST:
        return False
    return run is None or svc.run != run or _since(svc.flow.get("completedAt"), run)


def _failed(svc: Member, run: Optional[datetime]) -> bool:
    """Failed, or its flow of the latest run ended Failed."""
    return svc.state == "Failed" or (run is not None and svc.run == run and svc.flow.get("state") == "Failed"
                                     and _since(svc.flow.get("completedAt"), run))


def estimated_completion(left: Sequence[Member], mine: Sequence[Member], run: Optional[datetime],
                         now: datetime) -> Optional[datetime]:
    """The anchor plus the longest chain, over the dependencies among the
    members not done, of what each has left. None when that graph has a cycle.

    The anchor is the latest instant the records show (the run's start, a
    flow's start or end, a wait's end), not now: a running member's end is
    its work's start plus its expected seconds, a fixed instant, so only
    members not started would make a now-based estimate move every second,
    and the singleton would be rewritten while nothing changes. Between two
    changes of the records the estimate stands still; one in the past says
    the site is late. Now, to the minute, only when the records show no time."""
    times = [run] + [m.started for m in mine] + [parse_time(m.flow.get(k)) for m in mine
                                                 for k in ("startedAt", "completedAt")]
    anchor = max((t for t in times if t is not None), default=now.replace(second=0, microsecond=0))
    keys = {m.key for m in left}
    edges = {m.key: [d for d in m.depends if d in keys] for m in left}
    weights = {m.key: m.expected if m.started is None else
               max(0, int(seconds(m.started - anchor)) + m.expected) for m in left}
    try:
        _chain, total = critical_path(edges, weights)
    except ValueError:  # a cycle: the site plan refuses one, a record edited since may still have it
        return None
    return anchor + timedelta(seconds=total)


def _work_started(lifecycle: ServiceLifecycle) -> Optional[datetime]:
    """When the running flow's own work started: its start, or the moment its
    dependencies became ready when that is later (waiting is no work). None
    while it waits, or when no flow runs."""
    flow = lifecycle_flow(lifecycle)
    started = parse_time(flow.get("startedAt"))
    cond = condition(lifecycle, DEPENDENCIES_READY) or {}
    if flow.get("state") != "Running" or started is None or cond.get("status") == "False":
        return None
    ready = parse_time(cond.get("lastTransitionTime")) if cond.get("status") == "True" else None
    return max(started, ready) if ready else started


def _dependency(text: str, namespace: str) -> Key:
    """`name`, `name>=min` or `namespace/name>=min` as (namespace, name); no namespace: the dependent's."""
    ns, _slash, name = text.split(">=")[0].strip().rpartition("/")
    return (ns or namespace, name)


def _name(svc: Member, mine: Sequence[Member]) -> str:
    """The service's name, or namespace/name when another namespace of the site has one of that name."""
    twins = sum(1 for o in mine if o.key[1] == svc.key[1])
    return svc.key[1] if twins == 1 else f"{svc.key[0]}/{svc.key[1]}"


def _since(value: Any, run: datetime) -> bool:
    at = parse_time(value)
    return at is not None and at >= run


def _integer(value: Any) -> Optional[int]:
    try:
        return int(str(value).strip())
    except ValueError:
        return None
