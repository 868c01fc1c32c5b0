# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ServiceLifecycle kind (roles/crds/files/servicelifecycle.yaml) as typed records,
and its accessors.

A record just created has no status, and a service no flow ran on has no
status.flow: the accessors read those as empty, so
`lifecycle_flow(record).get("state")` replaces the
`((record.get("status") or {}).get("flow") or {}).get("state")` chain.
"""

from __future__ import annotations

from typing import List, Optional, TypedDict

from ansible_collections.lcm.openstack.plugins.module_utils.crds import Condition, ObjectMeta


class _LifecycleSpecKeys(TypedDict):
    service: str
    release: str


class LifecycleSpec(_LifecycleSpecKeys, total=False):
    dependsOn: List[str]  # name, name>=min_version or namespace/name>=min_version, as given


class _SkippedStepKeys(TypedDict):
    phase: str


class SkippedStep(_SkippedStepKeys, total=False):
    """A step the flow did not take (status.flow.skipped), and why."""

    reason: str
    after: int  # how many of the flow's Phases it came after


class FlowRecord(TypedDict, total=False):
    """status.flow: the flow that runs or last ran on the service."""

    name: str  # greenfield, update, rollback or remove
    state: str  # Running, Succeeded, Failed or RolledBack
    startedAt: str
    completedAt: str
    fromVersion: str
    targetVersion: str
    fromRevision: int
    planned: List[str]
    phases: List[str]
    skipped: List[SkippedStep]
    message: str


class _HistoryEntryKeys(TypedDict):
    name: str
    type: str


class HistoryEntry(_HistoryEntryKeys, total=False):
    """One Phase of the service in status.history, oldest first."""

    result: str  # Pending, Running, Succeeded or Failed
    startedAt: str
    completedAt: str
    message: str
    stateBefore: str


class LifecycleStatus(TypedDict, total=False):
    state: str
    currentVersion: str
    previousVersion: str
    targetVersion: str
    currentPhase: str
    observedGeneration: int
    conditions: List[Condition]
    flow: FlowRecord
    history: List[HistoryEntry]


class _ServiceLifecycleKeys(TypedDict):
    metadata: ObjectMeta
    spec: LifecycleSpec


class ServiceLifecycle(_ServiceLifecycleKeys, total=False):
    apiVersion: str
    kind: str
    status: LifecycleStatus


def lifecycle_spec(record: Optional[ServiceLifecycle]) -> LifecycleSpec:
    """The record's spec; empty when there is no record."""
    return (record or {}).get("spec") or {}


def lifecycle_status(record: Optional[ServiceLifecycle]) -> LifecycleStatus:
    """The record's status; empty when there is no record or it has no status yet."""
    return (record or {}).get("status") or {}


def lifecycle_flow(record: Optional[ServiceLifecycle]) -> FlowRecord:
    """The flow the record holds; empty when no flow was recorded."""
    return lifecycle_status(record).get("flow") or {}
