# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""When a Job's pods say it will not succeed, before the Job itself says so.

openstack-helm runs its Job pods with ``restartPolicy: OnFailure`` and a
``backoffLimit`` of 1000: a broken db-sync restarts in place for hours and its
Job never gets a Failed condition. The phase therefore counts the failures
itself, from the pods it already watches: restarts of their containers
(OnFailure) plus the Job's failed pods (Never). Once they reach the phase's
failure threshold the Job is Failed, with the last exit of its containers.

A pod the scheduler cannot place will not be placed by waiting either, unless
the cluster changes: after a grace it fails the phase with the scheduler's
message, instead of at the timeout.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, List, Mapping, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.kube.readiness import (
    FAILED, Readiness, container_statuses,
)

# Three failed runs: one or two failures are often a dependency that is not up
# yet (the database's grants, a Service without endpoints) and heal on the
# next try; a third in a row is a fault. With the kubelet's restart back-off
# (10 s, 20 s, ...) three runs of a short job end within about a minute.
DEFAULT_THRESHOLD = 3
# A minute lets a cluster autoscaler or a node that is joining take the pod;
# a pod that stays unschedulable longer needs someone to change the cluster.
DEFAULT_UNSCHEDULABLE_GRACE = 60
FAILURE_THRESHOLD = "FailureThreshold"
UNSCHEDULABLE = "Unschedulable"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
MESSAGE_CHARS = 300


@dataclass(frozen=True)
class FailurePolicy:
    """When a phase stops waiting for a Job that keeps failing, or a pod that
    cannot be scheduled. A threshold of 0 leaves failing Jobs to their own
    backoffLimit and the phase's timeout."""

    threshold: int = DEFAULT_THRESHOLD
    unschedulable_grace: float = DEFAULT_UNSCHEDULABLE_GRACE


@dataclass(frozen=True)
class Exit:
    """One non-zero exit of a container, as the kubelet reported it."""

    pod: str
    container: str  # "container db-sync" or "init container init"
    code: Any
    reason: str
    message: str
    finished: str

    def line(self) -> str:
        text = f"pod {self.pod} {self.container} exited {self.code} ({self.reason})"
        return f"{text}: {self.message}" if self.message else text


def pods_of_job(job: Mapping[str, Any], pods: Iterable[Mapping[str, Any]]) -> List[Mapping[str, Any]]:
    """The pods this very Job controls: an older Job of the same name may still
    have pods on their way out, and they carry the same job-name label."""
    uid = (job.get("metadata") or {}).get("uid")
    out = []
    for pod in pods:
        refs = (pod.get("metadata") or {}).get("ownerReferences") or []
        owner = next((r for r in refs if r.get("controller")), None)
        if uid is None or owner is None or owner.get("uid") == uid:
            out.append(pod)
    return sorted(out, key=lambda p: p["metadata"]["name"])


def _sidecars(pod: Mapping[str, Any]) -> set:
    """Init containers that run beside the main ones; their restarts are not failed runs."""
    return {c.get("name") for c in (pod.get("spec") or {}).get("initContainers") or []
            if c.get("restartPolicy") == "Always"}


def failure_count(job: Mapping[str, Any], pods: Iterable[Mapping[str, Any]]) -> int:
    """Failed runs of a Job: its containers' restarts plus its failed pods.

    The Job's own ``status.failed`` counts failed pods that are gone already;
    the pods seen count failures the Job controller has not recorded yet."""
    pods = list(pods)
    restarts = 0
    for pod in pods:
        sidecars = _sidecars(pod)
        restarts += sum(int(s.get("restartCount") or 0) for _label, s in container_statuses(pod)
                        if s.get("name") not in sidecars)
    failed_pods = sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Failed")
    recorded = int(((job.get("status") or {}).get("failed")) or 0)
    return restarts + max(failed_pods, recorded)


def last_exit(pods: Iterable[Mapping[str, Any]]) -> Optional[Exit]:
    """The latest non-zero exit of any container of these pods: the current
    state of a container that ended, or the last state of one that restarts."""
    exits: List[Exit] = []
    for pod in pods:
        for label, cstatus in container_statuses(pod):
            for where in ("state", "lastState"):
                term = (cstatus.get(where) or {}).get("terminated") or {}
                if term and term.get("exitCode", 0) != 0:
                    exits.append(Exit(pod["metadata"]["name"], f"{label} {cstatus.get('name')}",
                                      term.get("exitCode", "?"), term.get("reason") or "Error",
                                      one_line(term.get("message") or ""), term.get("finishedAt") or ""))
    return max(exits, key=lambda e: e.finished) if exits else None


def one_line(text: str) -> str:
    """The last line a container wrote (a traceback ends with its error), cut short."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    return last if len(last) <= MESSAGE_CHARS else last[:MESSAGE_CHARS] + " ..."


def unschedulable(pod: Mapping[str, Any]) -> Optional[str]:
    """The scheduler's message for a pod it could not place, else None."""
    if (pod.get("status") or {}).get("phase", "Pending") != "Pending":
        return None
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "PodScheduled" and cond.get("status") == "False" \
                and cond.get("reason") == UNSCHEDULABLE:
            return one_line(cond.get("message") or "") or "no node fits the pod"
    return None


def judge(base: Readiness, job: Optional[Mapping[str, Any]], pods: List[Mapping[str, Any]],
          policy: FailurePolicy, unschedulable_for: Callable[[Mapping[str, Any]], float]) -> Readiness:
    """The readiness of a Job (or a bare pod, job None) once its pods are heard.

    `base` is what the object says of itself; a terminal one stands.
    `unschedulable_for(pod)` says for how many seconds the waiter has seen the
    pod unschedulable."""
    if base.terminal:
        return base
    notes: List[str] = []
    if job is not None:
        count = failure_count(job, pods)
        if count:
            last = last_exit(pods)
            detail = f"; last: {last.line()}" if last else ""
            if 0 < policy.threshold <= count:
                return Readiness(FAILED, f"{count} failed run(s) of its pods reached the failure "
                                         f"threshold {policy.threshold}{detail}", FAILURE_THRESHOLD)
            notes.append(f"{count} failed run(s), threshold {policy.threshold or 'off'}{detail}")
    for pod in pods:
        said = unschedulable(pod)
        if said is None:
            continue
        name = pod["metadata"]["name"]
        waited = unschedulable_for(pod)
        if waited >= policy.unschedulable_grace:
            return Readiness(FAILED, f"pod {name} unschedulable for {waited:.0f}s: {said}", UNSCHEDULABLE)
        if job is not None:
            notes.append(f"pod {name} Unschedulable: {said}")
    return Readiness(base.state, "; ".join([base.message] + notes)) if notes else base
