# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The UpdateStatus kind (roles/crds/files/updatestatus.yaml) as typed records, and its accessor.

One UpdateStatus exists, named cluster; updatestatus/ computes its status
from the ServiceLifecycles, the Phases and the cluster, and writes it.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, TypedDict

from ansible_collections.lcm.openstack.plugins.module_utils.crds import Condition, ObjectMeta


class Versions(TypedDict, total=False):
    previous: str
    target: str


class _ServicePhaseKeys(TypedDict):
    type: str
    state: str  # Pending, Running, Succeeded or Failed


class ServicePhase(_ServicePhaseKeys, total=False):
    """One step of a service's flow (status.services[].phases)."""

    name: str
    durationSeconds: int


class _ServiceSiteKeys(TypedDict):
    name: str


class ServiceSite(_ServiceSiteKeys, total=False):
    """The site a service belongs to, its level there, what its flow waits for."""

    level: int
    waitingFor: str


class _ServiceEntryKeys(TypedDict):
    name: str
    namespace: str
    assessment: str  # Progressing, Progressing-Slow, Completed, Pending, Degraded or Stalled


class ServiceEntry(_ServiceEntryKeys, total=False):
    """One entry of status.services: one ServiceLifecycle."""

    flow: str
    state: str
    currentPhase: str
    versions: Versions
    completion: int
    startedAt: str
    completedAt: str
    estimatedCompletionAt: str
    phases: List[ServicePhase]
    site: ServiceSite


# `for` is a Python keyword: this record is spelt the functional way.
_SiteWaitingKeys = TypedDict("_SiteWaitingKeys", {"service": str, "for": str})


# A TypedDict made the functional way is a class; the pylint of ansible-test
# 2.21 (astroid 4) takes it for something else.
class SiteWaiting(_SiteWaitingKeys, total=False):  # pylint: disable=inherit-non-class
    """A service of the site whose flow waits for its dependencies, and for what."""

    namespace: str


class _SiteEntryKeys(TypedDict):
    name: str
    services: int
    done: int
    completion: int


class SiteEntry(_SiteEntryKeys, total=False):
    """One entry of status.sites: the services labelled with one site."""

    levels: int
    runStartedAt: str
    waiting: List[SiteWaiting]
    failed: List[str]
    estimatedCompletionAt: str


class ScopeResource(TypedDict, total=False):
    kind: str
    name: str
    namespace: str


class InsightScope(TypedDict, total=False):
    service: str
    namespace: str
    resources: List[ScopeResource]


class _InsightImpactKeys(TypedDict):
    level: str  # Info, Warning, Error or Critical
    type: str
    summary: str


class InsightImpact(_InsightImpactKeys, total=False):
    description: str


class Remediation(TypedDict, total=False):
    reference: str


class _InsightEntryKeys(TypedDict):
    uid: str
    startedAt: str
    impact: InsightImpact


class InsightEntry(_InsightEntryKeys, total=False):
    """One entry of status.insights."""

    scope: InsightScope
    remediation: Remediation


class UpdateStatusStatus(TypedDict, total=False):
    observedAt: str
    conditions: List[Condition]
    services: List[ServiceEntry]
    sites: List[SiteEntry]
    insights: List[InsightEntry]


class UpdateStatus(TypedDict, total=False):
    apiVersion: str
    kind: str
    metadata: ObjectMeta
    spec: Dict[str, Any]  # nothing to set; present for kubectl apply
    status: UpdateStatusStatus


def update_status_status(body: Optional[UpdateStatus]) -> Optional[UpdateStatusStatus]:
    """The singleton's status as last written; None when there is no
    singleton or nothing was written yet."""
    return (body or {}).get("status")
