# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Deployments that are not Available, or whose rollout passed its deadline."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterator, List, Mapping, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.base import (
    API_AVAILABILITY, ERROR, UPDATE_STALLED, Insight, Settings, Snapshot, condition, first_time, name_of,
    new_insight,
)
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.scope import Scope

NAME = "deployments"


def produce(snapshot: Snapshot, settings: Settings) -> List[Insight]:
    out = []
    for svc, deployment in Scope(snapshot).in_service(snapshot.deployments):
        name = name_of(deployment)
        for kind, cond, impact, summary in _findings(deployment, name):
            out.append(new_insight(
                NAME, kind, svc.name, svc.namespace, "Deployment", name,
                started_at=_since(cond, snapshot), level=ERROR, impact=impact, summary=summary,
                description=_said(cond), reference=f"kubectl describe deployment {name} -n {svc.namespace}"))
    return out


def _findings(deployment: Mapping[str, Any], name: str) -> Iterator[Tuple[str, Mapping[str, Any], str, str]]:
    """(insight kind, the condition that says so, impact, summary) for each thing wrong."""
    available = condition(deployment, "Available")
    if available is not None and available.get("status") == "False":
        yield ("unavailable", available, API_AVAILABILITY,
               f"Deployment {name} is not Available ({_replicas(deployment)})")
    progressing = condition(deployment, "Progressing")
    if progressing is not None and progressing.get("reason") == "ProgressDeadlineExceeded":
        yield ("progress-deadline", progressing, UPDATE_STALLED, f"Deployment {name} passed its progress deadline")


def _since(cond: Mapping[str, Any], snapshot: Snapshot) -> datetime:
    return first_time(cond.get("lastTransitionTime"), cond.get("lastUpdateTime")) or snapshot.now


def _said(cond: Mapping[str, Any]) -> str:
    return ": ".join(str(p) for p in (cond.get("reason"), cond.get("message")) if p)


def _replicas(deployment: Mapping[str, Any]) -> str:
    want = (deployment.get("spec") or {}).get("replicas", 1)
    return f"{(deployment.get('status') or {}).get('availableReplicas', 0)}/{want} available"
