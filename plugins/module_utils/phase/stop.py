# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stop the Jobs of a failed phase, so that nothing keeps hitting the database.

A Job with ``backoffLimit: 1000`` whose phase has failed would otherwise go on
retrying its migration long after the flow reported the service removed or
rolled back. Every Job the Phase controls that has not finished is
suspended (``spec.suspend: true``): the Job controller then deletes its
active pods and starts no new ones.

Suspended rather than deleted, because a suspended Job keeps what happened:
its failed count, its conditions and events, and its pods' last exit stay
readable with ``kubectl describe job`` next to the Phase that recorded them;
and ``kubectl patch job NAME -p '{"spec":{"suspend":false}}'`` resumes it by
hand while debugging. Running the phase again with the same inputs resumes
it (phase/resume.py); deleting the Phase, or running it with other inputs,
garbage-collects the Job as before.

Only Jobs of this very Phase run are touched: those it controls, and those it
created without an owner because a workload waits for them (phase/ownership.py),
known by their phase-uid label. A Job that the phase shares with a Helm
release, or that another Phase run made, is not its to stop. A suspended Job
without an owner outlives the Phase; the next run of the phase replaces it.
"""

from __future__ import annotations

from typing import Any, List, Mapping

from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import DynamicApiError
from ansible_collections.lcm.openstack.plugins.module_utils.crds.phase import Phase, StoppedJob
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import api_error
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import FIELD_MANAGER, LABEL_PHASE
from ansible_collections.lcm.openstack.plugins.module_utils.phase.ownership import of_phase

SUSPENDED = "Suspended"
NOT_STOPPED = "NotStopped"


def finished(job: Mapping[str, Any]) -> bool:
    """Complete or Failed: the Job controller runs no pod for it any more."""
    return any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
               for c in (job.get("status") or {}).get("conditions") or [])


def stop_jobs(dyn: Any, phase: Phase) -> List[StoppedJob]:
    """Suspend the unfinished Jobs of a Phase; one record per Job acted on.

    Never raises for a Job it could not stop: the phase has failed already, and
    that failure is what the user must see; the record says what was not
    stopped and why."""
    meta = phase["metadata"]
    namespace, name, uid = meta["namespace"], meta["name"], meta["uid"]
    try:
        jobs = dyn.resources.get(api_version="batch/v1", kind="Job")
        items = jobs.get(namespace=namespace, label_selector=f"{LABEL_PHASE}={name}").to_dict()["items"]
    except Exception as exc:  # noqa: BLE001 - reported in the record, never raised over the failure
        return [{"name": "*", "action": NOT_STOPPED, "message": _why(exc, "list", namespace)}]
    stopped: List[StoppedJob] = []
    for job in sorted(items, key=lambda j: j["metadata"]["name"]):
        if not of_phase(job, uid) or finished(job) or (job.get("spec") or {}).get("suspend"):
            continue
        job_name = job["metadata"]["name"]
        active = int((job.get("status") or {}).get("active") or 0)
        try:
            jobs.patch(body={"spec": {"suspend": True}}, name=job_name, namespace=namespace,
                       content_type="application/merge-patch+json", field_manager=FIELD_MANAGER)
        except Exception as exc:  # noqa: BLE001 - as above
            stopped.append({"name": job_name, "action": NOT_STOPPED, "message": _why(exc, "patch", namespace)})
            continue
        stopped.append({"name": job_name, "action": SUSPENDED, "activePods": active})
    return stopped


def _why(exc: Exception, verb: str, namespace: str) -> str:
    if isinstance(exc, DynamicApiError):
        return str(api_error(exc, verb, "jobs", namespace))
    return f"could not {verb} jobs in namespace {namespace}: {type(exc).__name__}: {exc}"


def describe(stopped: List[StoppedJob]) -> str:
    """One clause for the failure message: which Jobs were stopped, and which not."""
    done = [s["name"] for s in stopped if s["action"] == SUSPENDED]
    parts = [f"suspended Job {', '.join(done)}"] if done else []
    parts += [f"could not stop Job {s['name']}: {s.get('message', '')}"
              for s in stopped if s["action"] != SUSPENDED]
    return "; ".join(parts)
