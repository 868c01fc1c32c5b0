# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Upgrades that go ahead without a database backup to roll back to.

The rule, for each current upgrade Phase of a service (scope.py) that is
Running, or Succeeded while the service's flow still runs:

- spec.upgrade.backupDatabase is not true: no backup was asked for;
- it is true, but status.backupRef is not recorded, and either the Phase is
  Succeeded or none of its objects is a backup Job (a Job whose name holds
  "db-backup"): the backup that was asked for will not be there.

A backup Job that is still on its way is not a risk yet.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.crds.phase import Phase, phase_spec, phase_status
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.base import (
    DATA_LOSS_RISK, DOCS, WARNING, Insight, Settings, Snapshot, first_time, name_of, new_insight,
)
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.scope import Scope, Service

NAME = "backups"
BACKUP_JOB = "db-backup"


def produce(snapshot: Snapshot, settings: Settings) -> List[Insight]:
    scope = Scope(snapshot)
    out = []
    for svc, phase in scope.in_service(snapshot.phases):
        if phase_spec(phase).get("type") != "upgrade" or not scope.is_current(phase):
            continue
        found = risk(svc, phase)
        if found is None:
            continue
        problem, summary, advice = found
        name, status = name_of(phase), phase_status(phase)
        out.append(new_insight(
            NAME, problem, svc.name, svc.namespace, "Phase", name,
            started_at=first_time(status.get("startedAt"), (phase.get("metadata") or {}).get("creationTimestamp"))
            or snapshot.now,
            level=WARNING, impact=DATA_LOSS_RISK, summary=summary,
            description=f"Upgrade Phase {name} is {status.get('state', 'Pending')}. A rollback of this upgrade "
                        f"can return the release, but not the database its migration changed. {advice}",
            reference=f"{DOCS}#backups"))
    return out


def risk(svc: Service, phase: Phase) -> Optional[Tuple[str, str, str]]:
    """(problem, summary, advice) when the upgrade Phase has no backup to fall back on."""
    status = phase_status(phase)
    state = status.get("state")
    in_running_flow = svc.flow.get("state") == "Running" and name_of(phase) in (svc.flow.get("phases") or [])
    if not (state == "Running" or (state == "Succeeded" and in_running_flow)):
        return None
    if not (phase_spec(phase).get("upgrade") or {}).get("backupDatabase"):
        return ("no-backup", f"No database backup before the upgrade of {svc.name} (Phase {name_of(phase)})",
                "Upgrade with backup_database: true.")
    if status.get("backupRef"):
        return None
    has_job = any(o.get("kind") == "Job" and BACKUP_JOB in str(o.get("name")) for o in status.get("objects") or [])
    if not has_job:
        return ("backup-missing", f"Database backup asked for, but upgrade Phase {name_of(phase)} runs no backup Job",
                f"The chart renders no templates/job-db-backup.yaml, or its Job is not named *{BACKUP_JOB}*.")
    if state == "Succeeded":
        return ("backup-missing", f"Database backup asked for, but upgrade Phase {name_of(phase)} recorded none",
                "Check its backup Job before relying on a restore.")
    return None
