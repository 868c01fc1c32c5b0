# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Phase as the modules return it. Apart from the status writer (phase/status.py) so that what only reads
Phases (phase_info, the flow summary) does not ship the phase engine."""

from __future__ import annotations

from typing import Any, Dict

from ansible_collections.lcm.openstack.plugins.module_utils.common.model import FAILED
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import parse_time
from ansible_collections.lcm.openstack.plugins.module_utils.crds.phase import Phase, phase_spec, phase_status


def _snake(record: Dict[str, Any]) -> Dict[str, Any]:
    return {"".join(f"_{c.lower()}" if c.isupper() else c for c in k): v for k, v in record.items()}


def describe_phase(phase: Phase) -> Dict[str, Any]:
    """A Phase as the modules return it (snake_case keys)."""
    meta, spec, status = phase["metadata"], phase_spec(phase), phase_status(phase)
    started, completed = parse_time(status.get("startedAt")), parse_time(status.get("completedAt"))
    out = {
        "name": meta["name"], "namespace": meta.get("namespace"),
        "type": spec.get("type"), "service": spec.get("service"), "release": spec.get("release"),
        "target_version": spec.get("targetVersion"), "release_revision": spec.get("releaseRevision"),
        "state": status.get("state", "Pending"), "message": status.get("message", ""),
        "started_at": status.get("startedAt"), "completed_at": status.get("completedAt"),
        "duration_seconds": int((completed - started).total_seconds()) if started and completed else None,
        "spec_hash": status.get("specHash") or meta.get("labels", {}).get("lifecycle.openstack.org/spec-hash"),
        "objects": [dict(o) for o in status.get("objects") or []],
        "counts": dict(status.get("counts") or {}),
    }
    if status.get("state") == FAILED:
        out.update(failed_object=status.get("failedObject"), reason=status.get("reason"),
                   log_tail=status.get("logTail") or "",
                   stopped_jobs=[_snake(s) for s in status.get("stoppedJobs") or []])
    if status.get("backupRef"):
        out["backup_ref"] = status["backupRef"]
    if status.get("backupSource"):
        out["backup_source"] = dict(status["backupSource"])
    return out
