# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Resume a failed phase instead of running it again from scratch.

A phase run again with the inputs it failed with (the same spec hash) keeps
its Phase and what of its work is still good:

- a Job that completed stays complete: a db-init that ran is not run again;
- a Job still running (its pods were not the problem) goes on running;
- a Job the failed run suspended (phase/stop.py) because the phase timed out or
  another object failed is resumed (``spec.suspend: false``): the Job
  controller starts its pods again, its history stays;
- the Job or Pod that failed the phase (status.failedObject, unless the
  phase only ran out of time), and any Job that reached its own backoffLimit
  or Pod that ended Failed, is deleted and created anew: a fresh backoff,
  fresh pods.

Run with different inputs, the phase is a new run: the Failed Phase is
deleted and its work goes with it (phase/runner.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.crds.phase import Phase, phase_status

KEEP, RESUME, RECREATE = "keep", "resume", "recreate"
TIMEOUT = "Timeout"


@dataclass(frozen=True)
class EarlierRun:
    """What the failed run recorded: the object it failed on, and why."""

    failed_object: Optional[str] = None
    reason: Optional[str] = None

    @classmethod
    def of(cls, phase: Phase) -> "EarlierRun":
        status = phase_status(phase)
        return cls(status.get("failedObject"), status.get("reason"))


def verdict(existing: Mapping[str, Any], earlier: EarlierRun) -> Tuple[str, str]:
    """What to do with an object of the failed run, and why (for the report)."""
    kind = existing.get("kind", "")
    key = f"{kind}/{(existing.get('metadata') or {}).get('name', '')}"
    status = existing.get("status") or {}
    if kind == "Job":
        if _condition(status, "Complete"):
            return KEEP, "complete in the earlier run: kept"
        if _condition(status, "Failed"):
            return RECREATE, "failed in the earlier run: created anew"
        if key == earlier.failed_object and earlier.reason != TIMEOUT:
            return RECREATE, f"failed the earlier run ({earlier.reason}): created anew"
        if (existing.get("spec") or {}).get("suspend"):
            return RESUME, "suspended when the earlier run stopped: resumed"
        return KEEP, "still running from the earlier run: kept"
    if kind == "Pod":
        phase = status.get("phase")
        if phase == "Failed" or (key == earlier.failed_object and earlier.reason != TIMEOUT
                                 and phase != "Succeeded"):
            return RECREATE, "failed in the earlier run: created anew"
        return KEEP, "kept from the earlier run"
    return KEEP, ""


def _condition(status: Mapping[str, Any], ctype: str) -> bool:
    return any(c.get("type") == ctype and c.get("status") == "True" for c in status.get("conditions") or [])
