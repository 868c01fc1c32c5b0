# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Why a phase failed, as its Failed record says it: the object that failed,
with its pod's exit and log tail, or, on a timeout, every object not ready
and why (kube/diagnose.py reads each). Read from the cluster before the
phase's Jobs are stopped: stopping a Job deletes the pods whose exit it
quotes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.kube import diagnose as kube_diagnose


@dataclass(frozen=True)
class Failure:
    """Why a phase failed (phase/status.py writes it)."""

    failed_object: Optional[str]
    reason: str
    message: str
    tail: str = ""


def diagnose(dyn: Any, namespace: str, order: Sequence[Tuple[str, str]], result: Any, timeout: float) -> Failure:
    """The failed object (or, on a timeout, every one not ready, in the run's order) and why."""
    pods = getattr(result, "pods", {})
    if result.failed:
        key = result.failed[0]
        state = result.states[key]
        message = kube_diagnose.why(dyn, namespace, key, state, result.objects.get(key), pods.get(key))
        tail = kube_diagnose.log_tail(dyn, namespace, result.objects[key], pods.get(key)) \
            if key in result.objects else ""
        return Failure(f"{key[0]}/{key[1]}", state.reason or "Failed",
                       f"{key[0]} {key[1]} failed: {message.split(': ', 1)[-1]}", tail)
    pending = [k for k in order if k in result.states and not result.states[k].terminal]
    lines = [kube_diagnose.why(dyn, namespace, k, result.states[k], result.objects.get(k), pods.get(k))
             for k in pending]
    return Failure(f"{pending[0][0]}/{pending[0][1]}", "Timeout",
                   f"timed out after {timeout:.0f}s waiting for: " + "; ".join(lines))
