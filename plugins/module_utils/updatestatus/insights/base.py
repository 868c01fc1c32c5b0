# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the insight producers share: the snapshot they read, their
thresholds, the insight they return, and small helpers on plain dicts.

Only the standard library is used: unit tests import this directly.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Dict, Iterable, List, Mapping, Optional, Set, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.crds.phase import Phase
from ansible_collections.lcm.openstack.plugins.module_utils.crds.service_lifecycle import ServiceLifecycle
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import format_time, parse_time, utcnow
from ansible_collections.lcm.openstack.plugins.module_utils.drift.model import ObjectDrift

INFO, WARNING, ERROR, CRITICAL = "Info", "Warning", "Error", "Critical"
LEVELS = (INFO, WARNING, ERROR, CRITICAL)  # least severe first

API_AVAILABILITY = "API Availability"
SERVICE_OUTAGE = "Service Outage"
DATA_LOSS_RISK = "Data Loss Risk"
UPDATE_SPEED = "Update Speed"
UPDATE_STALLED = "Update Stalled"
UNKNOWN = "Unknown"
IMPACTS = (API_AVAILABILITY, SERVICE_OUTAGE, DATA_LOSS_RISK, UPDATE_SPEED, UPDATE_STALLED, UNKNOWN)

DOCS = "docs/update-status.md"


@dataclass
class Settings:
    """Thresholds of the producers and of the assessment."""

    pod_unready_minutes: int = 5
    job_expected_seconds: int = 600  # a Job's lifecycle.openstack.org/expected-duration overrides it
    stall_margin_seconds: int = 600
    overestimate: float = 1.2
    # A Helm operation may run this long (the flows give Helm 600s): a younger
    # pending-* revision is an operation in progress, not a stuck one.
    release_pending_minutes: int = 10


@dataclass
class Snapshot:
    """The cluster objects one computation reads, as the API returns them."""

    lifecycles: List[ServiceLifecycle] = field(default_factory=list)
    phases: List[Phase] = field(default_factory=list)
    pods: List[dict] = field(default_factory=list)
    deployments: List[dict] = field(default_factory=list)
    jobs: List[dict] = field(default_factory=list)
    services: List[dict] = field(default_factory=list)
    endpoint_slices: List[dict] = field(default_factory=list)
    releases: List[dict] = field(default_factory=list)  # Helm's release records, metadata only
    now: datetime = field(default_factory=utcnow)
    # Namespaces with a service whose objects the credentials may not list:
    # what is known of them is what the status said before (updatestatus/assessment.py).
    unread: Set[str] = field(default_factory=set)
    # The releases of the services at rest compared with their deployed
    # revision's manifest, (namespace, release) -> the objects that drifted
    # (fields only, never values); None: this refresh read no drift (the
    # phase engine's, at each phase: updatestatus/keeper.py).
    drift: Optional[Dict[Tuple[str, str], List[ObjectDrift]]] = None

    @classmethod
    def from_objects(cls, objects: Iterable[Mapping[str, Any]], now: datetime) -> "Snapshot":
        """Sort a plain list of objects by kind. Helm's release records (Secrets,
        or ConfigMaps with HELM_DRIVER=configmap, labelled owner=helm) keep
        their metadata only; other Secrets and ConfigMaps and unknown kinds
        are dropped."""
        snap = cls(now=now)
        lists = {"ServiceLifecycle": snap.lifecycles, "Phase": snap.phases, "Pod": snap.pods,
                 "Deployment": snap.deployments, "Job": snap.jobs, "Service": snap.services,
                 "EndpointSlice": snap.endpoint_slices}
        for obj in objects:
            kind = obj.get("kind")
            if kind in ("Secret", "ConfigMap") and labels(obj).get("owner") == "helm":
                meta = obj.get("metadata") or {}
                snap.releases.append({"apiVersion": "v1", "kind": kind, "metadata": dict(meta)})
            elif kind in lists:
                lists[kind].append(dict(obj))
        return snap


@dataclass
class Insight:
    """One problem, for as long as it lasts. `uid` stays the same while the
    same problem persists; `started_at` is the best known time it began."""

    uid: str
    started_at: datetime
    service: str
    namespace: str
    resources: List[Dict[str, str]]
    level: str
    type: str
    summary: str
    description: str = ""
    reference: str = ""

    def as_status(self, started_at: Optional[str] = None) -> Dict[str, Any]:
        """The insight as an entry of the UpdateStatus's status.insights."""
        impact = {"level": self.level, "type": self.type, "summary": self.summary}
        if self.description:
            impact["description"] = self.description
        out: Dict[str, Any] = {
            "uid": self.uid, "startedAt": started_at or format_time(self.started_at),
            "scope": {"service": self.service, "namespace": self.namespace,
                      "resources": [dict(r) for r in self.resources]},
            "impact": impact,
        }
        if self.reference:
            out["remediation"] = {"reference": self.reference}
        return out


def insight_uid(producer: str, namespace: str, kind: str, name: str, problem: str) -> str:
    """Stable for the same problem of the same object: never hashes text or time."""
    digest = hashlib.sha256(f"{producer}\0{namespace}\0{kind}/{name}\0{problem}".encode()).hexdigest()
    return f"{producer}-{digest[:16]}"


def resource(kind: str, name: str, namespace: str) -> Dict[str, str]:
    return {"kind": kind, "name": name, "namespace": namespace}


def labels(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


def annotations(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return (obj.get("metadata") or {}).get("annotations") or {}


def name_of(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def namespace_of(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "")


def condition(obj: Mapping[str, Any], ctype: str) -> Optional[Mapping[str, Any]]:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if isinstance(cond, Mapping) and cond.get("type") == ctype:
            return cond
    return None


def first_time(*values: Any) -> Optional[datetime]:
    """The first of the values that is a timestamp."""
    for value in values:
        parsed = parse_time(value)
        if parsed is not None:
            return parsed
    return None


def new_insight(producer: str, problem: str, service: str, namespace: str, kind: str, name: str, *,
                started_at: datetime, level: str, impact: str, summary: str, description: str = "",
                reference: str = "", also: Iterable[Dict[str, str]] = ()) -> Insight:
    """An insight about one main object (kind/name), which leads its resources."""
    return Insight(uid=insight_uid(producer, namespace, kind, name, problem), started_at=started_at,
                   service=service, namespace=namespace,
                   resources=[resource(kind, name, namespace)] + [dict(r) for r in also],
                   level=level, type=impact, summary=summary, description=description, reference=reference)
