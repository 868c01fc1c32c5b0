# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Services said to be Operational whose api Service has no ready endpoint.

The api Services are those of the service's Helm release that take its
traffic, as kube/release_services.py finds them, never by a name: the
Services with a selector (ExternalName ones aside) that select pods of the
release (its Deployments' pod templates, the namespace's pods), the traffic
gate's key aside; every Service of the release with a selector when none
does. A release that renders none (a node agent) is not judged. Their
endpoints are those of the EndpointSlices labelled
kubernetes.io/service-name=<Service>; an endpoint without a ready condition
counts as ready, as consumers read it. Other states (Draining, Upgrading) may
have no endpoint on purpose and are not looked at.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, List, Mapping, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.base import (
    CRITICAL, DOCS, SERVICE_OUTAGE, Insight, Settings, Snapshot, annotations, labels, name_of, namespace_of,
    new_insight, resource,
)
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import parse_time
from ansible_collections.lcm.openstack.plugins.module_utils.kube.release_services import candidates
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.scope import RELEASE_ANNOTATION, Scope, Service

NAME = "endpoints"
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
TRIGGER_TIME = "endpoints.kubernetes.io/last-change-trigger-time"


def produce(snapshot: Snapshot, settings: Settings) -> List[Insight]:
    out = []
    for svc in Scope(snapshot).services:
        if svc.status.get("state") != "Operational":
            continue
        for service in api_services(snapshot, svc):
            name = name_of(service)
            slices = [s for s in snapshot.endpoint_slices
                      if namespace_of(s) == svc.namespace and labels(s).get(SERVICE_NAME_LABEL) == name]
            endpoints = [e for s in slices for e in s.get("endpoints") or []]
            if any((e.get("conditions") or {}).get("ready") is not False for e in endpoints):
                continue
            out.append(new_insight(
                NAME, "no-ready-endpoint", svc.name, svc.namespace, "Service", name,
                started_at=_changed(slices) or snapshot.now, level=CRITICAL, impact=SERVICE_OUTAGE,
                summary=f"{svc.name} is Operational but its Service {name} has no ready endpoint",
                description=f"{len(endpoints)} endpoint(s) in {len(slices)} EndpointSlice(s), none ready: "
                            "nothing answers the service's API.",
                reference=f"{DOCS}#endpoints",
                also=[resource("EndpointSlice", name_of(s), svc.namespace) for s in sorted(slices, key=name_of)]))
    return out


def api_services(snapshot: Snapshot, svc: Service) -> List[dict]:
    """The Services of the release that select its pods (kube/release_services.py)."""
    mine = [s for s in snapshot.services
            if namespace_of(s) == svc.namespace and annotations(s).get(RELEASE_ANNOTATION) == svc.release]
    pods = [((d.get("spec") or {}).get("template") or {}).get("metadata", {}).get("labels") or {}
            for d in snapshot.deployments
            if namespace_of(d) == svc.namespace and annotations(d).get(RELEASE_ANNOTATION) == svc.release]
    pods += [labels(p) for p in snapshot.pods if namespace_of(p) == svc.namespace]
    return [dict(s) for s in candidates(mine, [p for p in pods if p])]


def _changed(slices: List[Mapping[str, Any]]) -> Optional[datetime]:
    """The last time the endpoints controller changed the slices, if it said."""
    times = [t for t in (parse_time(annotations(s).get(TRIGGER_TIME)) for s in slices) if t is not None]
    return max(times) if times else None
