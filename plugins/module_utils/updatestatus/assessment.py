# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The status of the UpdateStatus singleton: one entry per service (how far
its flow is, what runs, when it should be done), the insights, and the
cluster's Updating condition. Pure: the same snapshot and previous status give
the same result. The rules are in docs/update-status.md.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, List, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.crds.phase import Phase, phase_spec, phase_status
from ansible_collections.lcm.openstack.plugins.module_utils.crds.service_lifecycle import HistoryEntry, ServiceLifecycle, lifecycle_status
from ansible_collections.lcm.openstack.plugins.module_utils.crds.update_status import UpdateStatusStatus
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights import (
    CRITICAL, ERROR, LEVELS, Insight, Settings, Snapshot, produce_all,
)
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.base import (
    name_of, namespace_of,
)
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import format_time, parse_time, seconds
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights import drift
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.phases import timeout_seconds
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.scope import Scope
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.site import site_view

PROGRESSING, SLOW, STALLED = "Progressing", "Progressing-Slow", "Stalled"
COMPLETED, PENDING, DEGRADED = "Completed", "Pending", "Degraded"
PHASE_STATES = ("Pending", "Running", "Succeeded", "Failed")
DEFAULT_TIMEOUT = 600
UPDATING = "Updating"


@dataclass
class Step:
    """One phase of a flow: run (it has a name) or still only planned."""

    type: str
    name: str = ""
    state: str = "Pending"
    started: Optional[datetime] = None
    completed: Optional[datetime] = None
    timeout: Optional[int] = None  # its Phase's spec.timeoutSeconds, when the Phase exists


def steps(lifecycle: ServiceLifecycle, phases: List[Phase]) -> List[Step]:
    """The flow's phases in order, matched against its plan: each run phase
    takes the next planned step of its type (planned steps it passes were
    skipped); a phase the plan lacks (a rollback chain) is a step of its own;
    planned steps not reached follow, unless the flow Succeeded without them."""
    status = lifecycle_status(lifecycle)
    flow = status.get("flow") or {}
    history = {e.get("name"): e for e in status.get("history") or []}
    by_name = {name_of(p): p for p in phases}
    remaining = [str(t) for t in flow.get("planned") or []]
    out = []
    for name in flow.get("phases") or []:
        step = _step(str(name), history.get(name) or {}, by_name.get(name))
        if step.type in remaining:
            del remaining[:remaining.index(step.type) + 1]
        out.append(step)
    if flow.get("state") != "Succeeded":
        out += [Step(type=t) for t in remaining]
    return out


def _step(name: str, entry: HistoryEntry, phase: Optional[Phase]) -> Step:
    pstatus = phase_status(phase)
    state = pstatus.get("state") or entry.get("result") or "Pending"
    return Step(type=str(phase_spec(phase).get("type") or entry.get("type") or "?"), name=name,
                state=state if state in PHASE_STATES else "Pending",
                started=parse_time(pstatus.get("startedAt") or entry.get("startedAt")),
                completed=parse_time(pstatus.get("completedAt") or entry.get("completedAt")),
                timeout=timeout_seconds(phase) if phase is not None else None)


def estimates(lifecycle: ServiceLifecycle, flow_steps: List[Step], settings: Settings) -> List[float]:
    """Seconds each step is expected to take: the median of the Succeeded
    phases of its type in the service's history before this flow (not its
    own, nor any that started since it did), else the phase's timeout; times
    the overestimate."""
    status = lifecycle_status(lifecycle)
    flow = status.get("flow") or {}
    this_flow = set(flow.get("phases") or [])
    flow_start = parse_time(flow.get("startedAt"))
    running = [s.timeout for s in flow_steps if s.state == "Running" and s.timeout]
    known = [s.timeout for s in flow_steps if s.timeout]
    common = (running or known or [DEFAULT_TIMEOUT])[0]
    out = []
    for step in flow_steps:
        past = [_took(e) for e in status.get("history") or []
                if e.get("type") == step.type and e.get("result") == "Succeeded" and e.get("name") not in this_flow
                and not (flow_start and (parse_time(e.get("startedAt")) or flow_start) >= flow_start)]
        past = [d for d in past if d is not None]
        base = statistics.median(past) if past else float(step.timeout or common)
        out.append(base * settings.overestimate)
    return out


def remaining_seconds(flow_steps: List[Step], flow_estimates: List[float], now: datetime) -> float:
    """What is left: the estimate of each step not started, and of the running
    one what its estimate has not used up yet."""
    left = 0.0
    for step, estimate in zip(flow_steps, flow_estimates):
        if step.state == "Running":
            left += max(0.0, estimate - (seconds(now - step.started) if step.started else 0.0))
        elif step.state == "Pending":
            left += estimate
    return left


def service_status(lifecycle: ServiceLifecycle, phases: List[Phase], insights: List[Insight], settings: Settings,
                   now: datetime) -> Dict[str, Any]:
    """One entry of status.services for a ServiceLifecycle and its Phases."""
    status = lifecycle_status(lifecycle)
    flow = status.get("flow") or {}
    name, namespace = name_of(lifecycle), namespace_of(lifecycle)
    entry: Dict[str, Any] = {"name": name, "namespace": namespace, "assessment": None, "flow": flow.get("name"),
                             "state": status.get("state")}
    if not flow:
        entry.update(assessment=DEGRADED if status.get("state") == "Failed" else COMPLETED, completion=100,
                     versions={"previous": status.get("previousVersion"), "target": status.get("currentVersion")},
                     phases=[])
        return _clean(entry)
    flow_steps = steps(lifecycle, phases)
    flow_estimates = estimates(lifecycle, flow_steps, settings)
    done = sum(1 for s in flow_steps if s.state == "Succeeded")
    started = parse_time(flow.get("startedAt"))
    running = [s for s in flow_steps if s.state == "Running"]
    entry.update(
        currentPhase=running[0].type if running and flow.get("state") == "Running" else None,
        versions={"previous": flow.get("fromVersion"), "target": flow.get("targetVersion")},
        completion=100 if flow.get("state") == "Succeeded" else (100 * done // len(flow_steps) if flow_steps else 0),
        startedAt=_time(flow.get("startedAt")), completedAt=_time(flow.get("completedAt")),
        phases=[_phase_entry(s, now) for s in flow_steps])
    if flow.get("state") == "Running":
        left = math.ceil(round(remaining_seconds(flow_steps, flow_estimates, now), 3))  # no float dust
        entry["estimatedCompletionAt"] = format_time(now + timedelta(seconds=left))
        deadline = started + timedelta(seconds=sum(flow_estimates)) if started else None
        mine = [i for i in insights if (i.namespace, i.service) == (namespace, name)]
        entry["assessment"] = _running(flow_steps, deadline, mine, settings, now)
    else:
        entry["assessment"] = COMPLETED if flow.get("state") == "Succeeded" else DEGRADED
    return _clean(entry)


def _running(flow_steps: List[Step], deadline: Optional[datetime], insights: List[Insight], settings: Settings,
             now: datetime) -> str:
    if any(i.level in (ERROR, CRITICAL) for i in insights):
        return DEGRADED
    if deadline is not None and now > deadline + timedelta(seconds=settings.stall_margin_seconds):
        return STALLED
    if deadline is not None and now > deadline:
        return SLOW
    if all(s.state == "Pending" for s in flow_steps):
        return PENDING
    return PROGRESSING


def cluster_status(snapshot: Snapshot, settings: Settings, previous: Optional[UpdateStatusStatus] = None
                   ) -> UpdateStatusStatus:
    """The whole status of the singleton. `previous` is the status it holds
    now: an insight keeps the startedAt it had there, and the Updating
    condition its lastTransitionTime while its status stays the same."""
    previous = previous or {}
    now = snapshot.now
    unread = snapshot.unread
    insights = [i for i in produce_all(snapshot, settings) if i.namespace not in unread]
    scope = Scope(snapshot)
    before = {(e.get("namespace"), e.get("name")): e for e in previous.get("services") or []}
    services = [before[svc.key] if svc.namespace in unread and svc.key in before
                else service_status(svc.lifecycle, scope.phases_of(svc), insights, settings, now)
                for svc in scope.services]
    # The records are read cluster-wide: an unread namespace's entries get their site too.
    site_of, sites = site_view([svc.lifecycle for svc in scope.services], now)
    services = [_with_site(e, site_of.get(svc.key)) for svc, e in zip(scope.services, services)]
    updating = [svc for svc in scope.services if svc.flow.get("state") == "Running"]
    status: UpdateStatusStatus = {
        "observedAt": format_time(now),
        "conditions": [_updating(updating, previous, now)],
        "services": services,
        "insights": _insights(insights, previous, snapshot),
    }
    if sites:
        status["sites"] = sites
    return status


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _with_site(entry: Dict[str, Any], site: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """The entry with the service's site as the record has it now (none: none)."""
    out = {k: v for k, v in entry.items() if k != "site"}
    return dict(out, site=site) if site else out


def _insights(insights: List[Insight], previous: UpdateStatusStatus, snapshot: Snapshot) -> List[Dict[str, Any]]:
    """The insights, most severe and oldest first. Those of a namespace the
    credentials could not read are carried over from `previous` unchanged:
    whoever may read it keeps them current; so are the drift insights of a
    release this refresh did not compare (insights/drift.py)."""
    before = {i.get("uid"): parse_time(i.get("startedAt")) for i in previous.get("insights") or []}
    out = []
    for insight in insights:
        started = insight.started_at
        earlier = before.get(insight.uid)
        if earlier is not None and earlier < started:
            started = earlier
        out.append((-LEVELS.index(insight.level), started, insight.uid, insight.as_status(format_time(started))))
    carried = drift.carried(snapshot)
    for entry in previous.get("insights") or []:
        if (entry.get("scope") or {}).get("namespace") in snapshot.unread or drift.kept(entry, carried):
            level = (entry.get("impact") or {}).get("level")
            rank = -LEVELS.index(level) if level in LEVELS else 0
            out.append((rank, parse_time(entry.get("startedAt")) or _EPOCH, entry.get("uid") or "", entry))
    return [entry for *_key, entry in sorted(out, key=lambda t: t[:3])]


def _updating(updating: List[Any], previous: UpdateStatusStatus, now: datetime) -> Dict[str, Any]:
    names = [f"{svc.name} ({svc.namespace})" for svc in updating]
    if not names:
        cond = {"type": UPDATING, "status": "False", "reason": "AllServicesAtRest", "message": "no service is updating"}
    elif len(names) == 1:
        cond = {"type": UPDATING, "status": "True", "reason": "ServicesUpdating", "message": f"{names[0]} is updating"}
    else:
        cond = {"type": UPDATING, "status": "True", "reason": "ServicesUpdating",
                "message": f"{len(names)} services are updating: {', '.join(names)}"}
    old = [c for c in previous.get("conditions") or [] if c.get("type") == UPDATING]
    keep = old and old[0].get("status") == cond["status"] and old[0].get("lastTransitionTime")
    cond["lastTransitionTime"] = old[0]["lastTransitionTime"] if keep else format_time(now)
    return cond


def _phase_entry(step: Step, now: datetime) -> Dict[str, Any]:
    end = step.completed if step.state in ("Succeeded", "Failed") else (now if step.state == "Running" else None)
    took = int(seconds(end - step.started)) if end is not None and step.started is not None else None
    return _clean({"type": step.type, "name": step.name, "state": step.state,
                   "durationSeconds": max(0, took) if took is not None else None})


def _took(entry: HistoryEntry) -> Optional[float]:
    started, completed = parse_time(entry.get("startedAt")), parse_time(entry.get("completedAt"))
    return seconds(completed - started) if started and completed else None


def _time(value: Any) -> Optional[str]:
    parsed = parse_time(value)
    return format_time(parsed) if parsed else None


def _clean(entry: Dict[str, Any]) -> Dict[str, Any]:
    """Without empty values: the CRD has no nulls, and an empty string says nothing."""
    out = {}
    for key, value in entry.items():
        if isinstance(value, dict):
            value = {k: v for k, v in value.items() if v not in (None, "")}
        if value is None or value == "" or value == {}:
            continue
        out[key] = value
    return out
