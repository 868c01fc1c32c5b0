# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pods that crash-loop, cannot pull their image, or stay not Ready.

One insight per pod, the most specific one: a crash-looping pod is not also
reported as not Ready. A pod that backs a Deployment costs API availability;
a Job's or a bare pod's problem holds the update up instead.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.base import (
    API_AVAILABILITY, ERROR, UPDATE_SPEED, UPDATE_STALLED, WARNING, Insight, Settings, Snapshot, condition,
    first_time, name_of, namespace_of, new_insight, resource,
)
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import seconds
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.scope import Scope
from ansible_collections.lcm.openstack.plugins.module_utils.kube.readiness import explain_pod

NAME = "pods"
CRASH_LOOP = frozenset({"CrashLoopBackOff"})
# A pull alternates between ErrImagePull and ImagePullBackOff: one problem.
IMAGE_PULL = frozenset({"ErrImagePull", "ImagePullBackOff", "InvalidImageName"})


def produce(snapshot: Snapshot, settings: Settings) -> List[Insight]:
    scope = Scope(snapshot)
    out = []
    for pod in sorted(snapshot.pods, key=lambda p: (namespace_of(p), name_of(p))):
        status = pod.get("status") or {}
        if status.get("phase") in ("Succeeded", "Failed") or (pod.get("metadata") or {}).get("deletionTimestamp"):
            continue
        svc, owner_kind, owner = scope.pod_owner(pod)
        if svc is None or not scope.of_current_phase(pod) or (owner is not None and not scope.of_current_phase(owner)):
            continue
        found = _problem(pod, owner_kind, owner, settings, snapshot)
        if found is not None:
            out.append(new_insight(NAME, found.pop("problem"), svc.name, svc.namespace, "Pod", name_of(pod),
                                   also=[resource(owner_kind, name_of(owner), svc.namespace)] if owner else [],
                                   **found))
    return out


def _problem(pod: Mapping[str, Any], owner_kind: str, owner: Optional[Mapping[str, Any]], settings: Settings,
             snapshot: Snapshot) -> Optional[Dict[str, Any]]:
    name, namespace = name_of(pod), namespace_of(pod)
    serving = owner_kind == "Deployment"
    runs = f" It runs for {owner_kind} {name_of(owner)}." if owner else ""
    since = _unready_since(pod, snapshot)
    crashing = _waiting(pod, CRASH_LOOP)
    if crashing:
        first = crashing[0]
        return dict(problem="crash-loop", started_at=since, level=ERROR,
                    impact=API_AVAILABILITY if serving else UPDATE_STALLED,
                    summary=f"Pod {name}: {_containers(crashing)} {_be(crashing)} in CrashLoopBackOff",
                    description="; ".join(_crash_line(c) for c in crashing) + "." + runs,
                    reference=f"kubectl logs {name} -c {first['name']} --previous -n {namespace}")
    pulling = _waiting(pod, IMAGE_PULL)
    if pulling:
        first = pulling[0]
        return dict(problem="image-pull", started_at=since, level=ERROR, impact=UPDATE_STALLED,
                    summary=f"Pod {name}: {_containers(pulling)} cannot pull image {first.get('image') or '?'}",
                    description="; ".join(_waiting_line(c) for c in pulling) + "." + runs,
                    reference=f"kubectl describe pod {name} -n {namespace}")
    ready = condition(pod, "Ready")
    if ready is not None and ready.get("status") == "True":
        return None
    if seconds(snapshot.now - since) <= settings.pod_unready_minutes * 60:
        return None
    return dict(problem="unready", started_at=since, level=WARNING,
                impact=API_AVAILABILITY if serving else UPDATE_SPEED,
                summary=f"Pod {name} has not been Ready for more than {settings.pod_unready_minutes}m",
                description=f"{explain_pod(pod)}.{runs}",
                reference=f"kubectl describe pod {name} -n {namespace}")


def _unready_since(pod: Mapping[str, Any], snapshot: Snapshot) -> datetime:
    """When the pod last became not Ready; else when it started or was created."""
    ready = condition(pod, "Ready") or {}
    meta, status = pod.get("metadata") or {}, pod.get("status") or {}
    return first_time(ready.get("lastTransitionTime") if ready.get("status") != "True" else None,
                      status.get("startTime"), meta.get("creationTimestamp")) or snapshot.now


def _waiting(pod: Mapping[str, Any], reasons: frozenset) -> List[Dict[str, Any]]:
    status = pod.get("status") or {}
    out = []
    for label, statuses in (("init container", status.get("initContainerStatuses")),
                            ("container", status.get("containerStatuses"))):
        for cstatus in statuses or []:
            waiting = (cstatus.get("state") or {}).get("waiting") or {}
            if waiting.get("reason") in reasons:
                out.append(dict(cstatus, label=label, waiting=waiting))
    return out


def _containers(found: List[Dict[str, Any]]) -> str:
    names = ", ".join(c["name"] for c in found)
    return f"{found[0]['label']} {names}" if len(found) == 1 else f"containers {names}"


def _be(found: List[Dict[str, Any]]) -> str:
    return "is" if len(found) == 1 else "are"


def _waiting_line(cstatus: Dict[str, Any]) -> str:
    waiting = cstatus["waiting"]
    return f"{cstatus['label']} {cstatus['name']} {waiting['reason']}" + \
        (f": {waiting['message']}" if waiting.get("message") else "")


def _crash_line(cstatus: Dict[str, Any]) -> str:
    line = _waiting_line(cstatus)
    term = (cstatus.get("lastState") or {}).get("terminated") or {}
    if term:
        last: Tuple[str, ...] = tuple((term.get("message") or "").strip().splitlines()[-1:])
        line += f"; last exit {term.get('exitCode', '?')} ({term.get('reason') or 'Error'})" + \
            (f": {last[0]}" if last else "")
    if cstatus.get("restartCount"):
        line += f"; restarted {cstatus['restartCount']} times"
    return line
