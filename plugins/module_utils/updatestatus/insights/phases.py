# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Phases that failed, and Phases still Running past their timeout (a run
that was interrupted leaves its Phase Running: nothing will end it).

Only current Phases count (scope.py): those of the service's latest flow, and
a Phase run outside a flow while no newer Phase of its type exists. A failure
of an earlier flow is history.
"""

from __future__ import annotations

from typing import Any, Dict, List

from ansible_collections.lcm.openstack.plugins.module_utils.crds.phase import Phase, PhaseStatus, phase_spec, phase_status
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.base import (
    ERROR, UPDATE_STALLED, Insight, Settings, Snapshot, name_of, new_insight, resource,
)
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import parse_time, seconds
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.scope import Scope

NAME = "phases"
DEFAULT_TIMEOUT = 600  # the CRD's default of spec.timeoutSeconds


def produce(snapshot: Snapshot, settings: Settings) -> List[Insight]:
    scope = Scope(snapshot)
    out = []
    for svc, phase in scope.in_service(snapshot.phases):
        if not scope.is_current(phase):
            continue
        name, spec, status = name_of(phase), phase_spec(phase), phase_status(phase)
        ptype = spec.get("type", "?")
        reference = f"kubectl get phase {name} -n {svc.namespace} -o yaml"
        if status.get("state") == "Failed":
            failed = _failed_object(status.get("failedObject"), svc.namespace)
            out.append(new_insight(
                NAME, "failed", svc.name, svc.namespace, "Phase", name,
                started_at=parse_time(status.get("completedAt")) or parse_time(status.get("startedAt"))
                or snapshot.now,
                level=ERROR, impact=UPDATE_STALLED,
                summary=f"Phase {name} ({ptype}) failed: {status.get('message') or status.get('reason') or 'Failed'}",
                description=_description(status), reference=reference, also=failed))
        elif status.get("state") == "Running":
            started = parse_time(status.get("startedAt"))
            timeout = timeout_seconds(phase)
            if started is not None and seconds(snapshot.now - started) > timeout:
                out.append(new_insight(
                    NAME, "timeout", svc.name, svc.namespace, "Phase", name, started_at=started,
                    level=ERROR, impact=UPDATE_STALLED,
                    summary=f"Phase {name} ({ptype}) is still Running past its timeout of {timeout}s",
                    description="The phase engine fails a phase at its timeout, so a Phase still Running past "
                                "it was left by an interrupted run; running the flow (or the phase) again "
                                f"resumes it. Last message: {status.get('message') or '-'}",
                    reference=reference))
    return out


def timeout_seconds(phase: Phase) -> int:
    try:
        return int(phase_spec(phase).get("timeoutSeconds") or DEFAULT_TIMEOUT)
    except (TypeError, ValueError):
        return DEFAULT_TIMEOUT


def _failed_object(value: Any, namespace: str) -> List[Dict[str, str]]:
    kind, slash, name = str(value or "").partition("/")
    return [resource(kind, name, namespace)] if kind and slash and name else []


def _description(status: PhaseStatus) -> str:
    parts = []
    if status.get("reason"):
        parts.append(f"Reason: {status['reason']}.")
    if status.get("failedObject"):
        parts.append(f"Failed object: {status['failedObject']}.")
    tail = str(status.get("logTail") or "").strip().splitlines()
    if tail:
        parts.append(f"Last log line: {tail[-1]}")
    return " ".join(parts)
