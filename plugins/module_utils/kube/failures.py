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
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Set, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.kube.readiness import (
    CURRENT, FAILED, IN_PROGRESS, Readiness, container_statuses,
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
# How a Job's exit codes read, beside 0 (phase/migration_jobs.py): "warning=1;repeat=1".
# A warning exit passes the Job with a warning; a repeat exit runs it again
# and is no failed run; any other non-zero exit is a failure.
EXIT_CODES_ANNOTATION = "lifecycle.openstack.org/exit-codes"
OUTPUT_CHARS = 2000
WARNING = "Warning"


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


def exit_codes(job: Mapping[str, Any]) -> Dict[str, Set[int]]:
    """{"warning": {1}, "repeat": {1}} as the Job's annotation says; empty without it."""
    text = str(((job.get("metadata") or {}).get("annotations") or {}).get(EXIT_CODES_ANNOTATION) or "")
    out: Dict[str, Set[int]] = {}
    for part in text.split(";"):
        word, _sep, codes = part.partition("=")
        if word.strip() and codes.strip():
            out[word.strip()] = {int(c) for c in codes.split(",") if c.strip().lstrip("-").isdigit()}
    return out


def pod_exit(pod: Mapping[str, Any]) -> Optional[Tuple[int, str]]:
    """The exit code and output (termination message) of a pod's main container
    that ended, if it did."""
    for label, cstatus in container_statuses(pod):
        term = (cstatus.get("state") or {}).get("terminated") or {}
        if label == "container" and term:
            return int(term.get("exitCode", 0) or 0), str(term.get("message") or "").strip()
    return None


def output(text: str) -> str:
    """A container's output as one message: its lines joined, the start cut when long."""
    lines = " | ".join(line.rstrip() for line in str(text).splitlines() if line.strip())
    return lines if len(lines) <= OUTPUT_CHARS else "... " + lines[-OUTPUT_CHARS:]


def failure_count(job: Mapping[str, Any], pods: Iterable[Mapping[str, Any]]) -> int:
    """Failed runs of a Job: its containers' restarts plus its failed pods.

    The Job's own ``status.failed`` counts failed pods that are gone already;
    the pods seen count failures the Job controller has not recorded yet.
    A Job whose exit codes are annotated counts only the exits it does not
    expect, from its pods (they run with restartPolicy Never and stay)."""
    pods = list(pods)
    codes = exit_codes(job)
    if codes:
        expected = codes.get("warning", set()) | codes.get("repeat", set())
        return sum(1 for p in pods if (pod_exit(p) or (0, ""))[0] not in expected | {0}
                   and (p.get("status") or {}).get("phase") == "Failed")
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


def _by_exit_code(base: Readiness, job: Mapping[str, Any], pods: List[Mapping[str, Any]]) -> Optional[Readiness]:
    """A Job with annotated exit codes: Failed on a warning code is a pass
    with that warning; a failure says the code and the whole output; a
    repeat is a run more, said while the Job runs again."""
    codes = exit_codes(job)
    ended = sorted(((p.get("status") or {}).get("startTime") or "", p["metadata"]["name"], pod_exit(p))
                   for p in pods if pod_exit(p) is not None)
    last = ended[-1] if ended else None
    if base.state == FAILED:
        if last is None:
            # The Job controller saw its pod end before this watch did: wait for the pod's word.
            return Readiness(IN_PROGRESS, f"{base.message}; reading its pod's exit code")
        code, text = last[2]
        if code in codes.get("warning", set()):
            return Readiness(CURRENT, f"passed with a warning (exit {code}): {output(text) or 'no output'}", WARNING)
        if code in codes.get("repeat", set()):
            return Readiness(FAILED, f"still reported more to do after {len(ended)} run(s): pod {last[1]} exited "
                                     f"{code}: {output(text) or 'no output'}", base.reason)
        return Readiness(FAILED, f"pod {last[1]} exited {code}: {output(text) or 'no output'}", base.reason)
    repeats = [e for e in ended if e[2][0] in codes.get("repeat", set())]
    if repeats and not base.terminal:
        return Readiness(base.state, f"{base.message}; run {len(repeats) + 1}: the last reported more to do "
                                     f"(exit {repeats[-1][2][0]}): {one_line(repeats[-1][2][1])}")
    return None


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
    if job is not None and exit_codes(job):
        read = _by_exit_code(base, job, pods)
        if read is not None:
            return read
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
