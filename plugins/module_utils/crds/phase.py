# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Phase kind (roles/crds/files/phase.yaml) as typed records, and its accessors.

A Phase as read from the apiserver is a plain dict; these types name its
keys as the CRD has them. A Phase just created has no status: phase_status()
reads it as an empty one, so `phase_status(phase).get("state")` replaces the
`(phase.get("status") or {}).get("state")` chain.
"""

from __future__ import annotations

from typing import Dict, List, Optional, TypedDict, Union

from ansible_collections.lcm.openstack.plugins.module_utils.crds import Condition, ObjectMeta


class PhaseFailure(TypedDict, total=False):
    threshold: int
    unschedulableGraceSeconds: int


class PhaseSource(TypedDict, total=False):
    chart: str
    chartVersion: str
    selection: str  # stage, templates, annotation or manifests
    templates: List[str]
    valuesDigest: str
    manifestsDigest: str
    valuesFromRelease: bool


class BackupSource(TypedDict, total=False):
    """The mariadb chart's backup CronJob a backup or restore Job is made
    from (spec.upgrade.backup, spec.rollback.backup, status.backupSource)."""

    cronjob: str
    namespace: str
    databases: List[str]
    database: str
    node: str


class _MigrationJobKeys(TypedDict):
    step: str  # check, expand, online or contract
    name: str
    command: List[str]


class MigrationJob(_MigrationJobKeys, total=False):
    """A Job made from the chart's db-sync Job (phase/migration_jobs.py)."""

    warningExitCodes: List[int]
    repeatExitCodes: List[int]
    attempts: int


class PhaseUpgrade(TypedDict, total=False):
    backupDatabase: bool
    backupTimeoutSeconds: int
    backup: BackupSource
    missingJob: str  # fail or warn
    jobs: List[MigrationJob]  # the expand Jobs, run instead of the chart's db-sync


class PhaseCheck(TypedDict, total=False):
    jobs: List[MigrationJob]


class PhaseContract(TypedDict, total=False):
    jobs: List[MigrationJob]  # online migrations, then contract, after the chart's db-sync


class PhaseRollback(TypedDict, total=False):
    toRevision: int
    restoreDatabase: bool
    backupRef: str
    backup: BackupSource
    missingJob: str


class PhaseUninstall(TypedDict, total=False):
    purgeDatabase: bool
    missingJob: str
    keepHistory: bool


class PhaseTest(TypedDict, total=False):
    timeoutSeconds: int


class PhaseTraffic(TypedDict, total=False):
    backend: str  # service_selector, ingress_canary or openshift_route
    target: str
    selectorLabel: str
    track: str
    fromTrack: str
    fallbackTrack: str
    minReady: int
    canaryService: str
    canaryPort: Union[int, str]
    fromWeight: int
    steps: List[int]
    pauseSeconds: int
    check: str
    drainGraceSeconds: int


class _PhaseSpecKeys(TypedDict):
    type: str
    service: str
    release: str


class PhaseSpec(_PhaseSpecKeys, total=False):
    targetVersion: str
    flow: str
    releaseRevision: int
    timeoutSeconds: int
    failure: PhaseFailure
    source: PhaseSource
    upgrade: PhaseUpgrade
    check: PhaseCheck
    contract: PhaseContract
    rollback: PhaseRollback
    uninstall: PhaseUninstall
    test: PhaseTest
    traffic: PhaseTraffic


class PhaseCondition(Condition, total=False):
    observedGeneration: int


class _ObjectEntryKeys(TypedDict):
    kind: str
    name: str
    state: str  # kstatus terms


class ObjectEntry(_ObjectEntryKeys, total=False):
    """One entry of status.objects: an object the phase applied or uses."""

    apiVersion: str
    namespace: str
    message: str
    owned: bool
    reason: str


class _StoppedJobKeys(TypedDict):
    name: str
    action: str  # Suspended or NotStopped


class StoppedJob(_StoppedJobKeys, total=False):
    activePods: int
    message: str


class PhaseStatus(TypedDict, total=False):
    state: str  # Pending, Running, Succeeded or Failed
    message: str
    observedGeneration: int
    specHash: str
    startedAt: str
    completedAt: str
    conditions: List[PhaseCondition]
    counts: Dict[str, int]
    objects: List[ObjectEntry]
    failedObject: str
    reason: str
    logTail: str
    stoppedJobs: List[StoppedJob]
    backupRef: str
    backupSource: BackupSource


class _PhaseKeys(TypedDict):
    metadata: ObjectMeta
    spec: PhaseSpec


class Phase(_PhaseKeys, total=False):
    apiVersion: str
    kind: str
    status: PhaseStatus


def phase_spec(phase: Optional[Phase]) -> PhaseSpec:
    """The Phase's spec; empty when there is no Phase (or no spec yet)."""
    return (phase or {}).get("spec") or {}


def phase_status(phase: Optional[Phase]) -> PhaseStatus:
    """The Phase's status; empty when there is no Phase or it has no status yet."""
    return (phase or {}).get("status") or {}
