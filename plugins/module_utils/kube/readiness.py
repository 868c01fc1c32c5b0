# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decide whether one Kubernetes object, given as a plain dict, has reached its goal.

The states follow the kstatus vocabulary (Current, InProgress, Failed,
Terminating, NotFound, Unknown). Only the standard library is used, so the
module can be imported by Ansible modules and by plain unit tests alike.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

CURRENT = "Current"
IN_PROGRESS = "InProgress"
FAILED = "Failed"
TERMINATING = "Terminating"
NOT_FOUND = "NotFound"
UNKNOWN = "Unknown"

# Waiting reasons after which a pod will not get anywhere without outside help.
STALLED_WAITING = frozenset({"CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull",
                             "CreateContainerConfigError", "InvalidImageName", "CreateContainerError"})
# Waiting reasons that describe the whole pod rather than one container.
_POD_WIDE_WAITING = frozenset({"ContainerCreating", "PodInitializing"})
_GENERATION_KINDS = frozenset({"Deployment", "StatefulSet", "DaemonSet"})
_READY_TYPES = ("Ready", "Available", "Complete", "Succeeded")
_DONE_PHASES = frozenset({"succeeded", "ready", "running", "active", "bound", "available",
                          "complete", "completed"})


@dataclass(frozen=True)
class Readiness:
    """Outcome of :func:`assess`."""

    state: str
    message: str
    reason: str = ""

    @property
    def terminal(self) -> bool:
        """True when waiting longer will not change the outcome."""
        return self.state in (CURRENT, FAILED)


def _get(obj: Any, *path: str, default: Any = None) -> Any:
    for key in path:
        if not isinstance(obj, Mapping):
            return default
        obj = obj.get(key)
    return default if obj is None else obj


def _num(obj: Mapping[str, Any], *path: str, default: int = 0) -> int:
    return int(_get(obj, *path, default=default))


def _condition(obj: Mapping[str, Any], ctype: str) -> Optional[Mapping[str, Any]]:
    for cond in _get(obj, "status", "conditions", default=[]):
        if isinstance(cond, Mapping) and cond.get("type") == ctype:
            return cond
    return None


def _true(obj: Mapping[str, Any], *ctypes: str) -> Optional[Mapping[str, Any]]:
    """The first of the given condition types whose status is True."""
    for ctype in ctypes:
        cond = _condition(obj, ctype)
        if cond is not None and cond.get("status") == "True":
            return cond
    return None


def _join(*parts: Any) -> str:
    return ": ".join(str(p) for p in parts if p not in (None, ""))


def _failed(reason: str, message: Any = "") -> Readiness:
    return Readiness(FAILED, _join(reason, message), reason)


def _job(obj: Mapping[str, Any]) -> Readiness:
    succeeded = _num(obj, "status", "succeeded")
    completions = _num(obj, "spec", "completions", default=1)
    # Only the final conditions count: SuccessCriteriaMet and FailureTarget come
    # first, while the Job's pods are still being counted or terminated.
    cond = _true(obj, "Failed")
    if cond is not None:
        return _failed(cond.get("reason") or cond["type"], cond.get("message"))
    counts = f"{succeeded}/{completions} succeeded"
    if _true(obj, "Complete"):
        return Readiness(CURRENT, counts)
    failed = _num(obj, "status", "failed")
    counts += f", {_num(obj, 'status', 'active')} active" + (f", {failed} failed" if failed else "")
    return Readiness(IN_PROGRESS, counts)


def container_statuses(pod: Mapping[str, Any]) -> List[Tuple[str, Mapping[str, Any]]]:
    """(label, status) for init containers first, then the regular containers."""
    status = _get(pod, "status", default={})
    return ([("init container", s) for s in status.get("initContainerStatuses") or []]
            + [("container", s) for s in status.get("containerStatuses") or []])


def _exit_line(label: str, cstatus: Mapping[str, Any], term: Mapping[str, Any]) -> str:
    code = term.get("exitCode", "?")
    return _join(f"{label} {cstatus.get('name')} exited {code} ({term.get('reason') or 'Error'})",
                 term.get("message"))


def explain_pod(pod: Mapping[str, Any]) -> str:
    """One line on why a pod is not done yet (or why it failed)."""
    phase = _get(pod, "status", "phase", default="Pending")
    sched = _condition(pod, "PodScheduled")
    if sched is not None and sched.get("status") == "False":
        return _join(phase, sched.get("reason") or "NotScheduled", sched.get("message"))
    for label, cstatus in container_statuses(pod):
        waiting = _get(cstatus, "state", "waiting")
        term = _get(cstatus, "state", "terminated")
        if waiting is not None:
            reason = waiting.get("reason") or "Waiting"
            if reason in _POD_WIDE_WAITING:
                return _join(phase, reason)
            return _join(phase, f"{label} {cstatus.get('name')} {reason}", waiting.get("message"))
        if term is not None and term.get("exitCode", 0) != 0:
            return _join(phase, _exit_line(label, cstatus, term))
        if label == "init container" and term is None:
            return _join(phase, f"init container {cstatus.get('name')} running")
    if phase == "Running":
        unready = [s.get("name") for label, s in container_statuses(pod)
                   if label == "container" and not s.get("ready")]
        return "Running, not Ready" + (f" (waiting on {', '.join(unready)})" if unready else "")
    return str(phase)


def _pod(obj: Mapping[str, Any]) -> Readiness:
    phase = _get(obj, "status", "phase")
    if phase == "Succeeded":
        return Readiness(CURRENT, "Succeeded")
    if phase == "Failed":
        status_reason = _get(obj, "status", "reason", default="")
        status_message = _get(obj, "status", "message", default="")
        exits, first_term = [], ""
        for label, cstatus in container_statuses(obj):
            term = _get(cstatus, "state", "terminated")
            if term is not None and term.get("exitCode", 0) != 0:
                first_term = first_term or term.get("reason") or "Error"
                exits.append(_exit_line(label, cstatus, term))
        # The pod's message often repeats its container's termination message.
        said = status_message and any(status_message in e for e in exits)
        parts = [_join(status_reason, None if said else status_message)] + exits
        reason = status_reason or first_term or "Failed"
        return Readiness(FAILED, "; ".join(p for p in parts if p) or "Failed", reason)
    for _label, cstatus in container_statuses(obj):
        reason = _get(cstatus, "state", "waiting", "reason")
        if reason in STALLED_WAITING:
            return Readiness(FAILED, explain_pod(obj), reason)
    if _get(obj, "spec", "restartPolicy", default="Always") != "Always":
        # A run-to-completion pod (a test pod) is done when it Succeeded, not
        # when it is Ready: a rally pod is Ready while its tests still run.
        return Readiness(IN_PROGRESS, explain_pod(obj) if phase != "Running" else "Running, not finished")
    if phase == "Running" and _true(obj, "Ready"):
        return Readiness(CURRENT, "Running, Ready")
    return Readiness(IN_PROGRESS, explain_pod(obj))


def _deployment(obj: Mapping[str, Any]) -> Readiness:
    progressing = _condition(obj, "Progressing")
    if progressing is not None and progressing.get("reason") == "ProgressDeadlineExceeded":
        return _failed("ProgressDeadlineExceeded", progressing.get("message"))
    want = _num(obj, "spec", "replicas", default=1)
    updated, available, ready, total = (_num(obj, "status", key) for key in (
        "updatedReplicas", "availableReplicas", "readyReplicas", "replicas"))
    counts = f"{updated}/{want} updated, {available}/{want} available"
    if updated < want:
        return Readiness(IN_PROGRESS, counts)
    if total > updated:
        return Readiness(IN_PROGRESS, f"waiting for {total - updated} old replica(s) to terminate")
    if available != want or ready != want or total != want or updated != want:
        return Readiness(IN_PROGRESS, f"{counts}, {ready}/{want} ready")
    if want > 0 and not _true(obj, "Available"):
        return Readiness(IN_PROGRESS, f"{counts}, waiting for condition Available=True")
    return Readiness(CURRENT, counts)


def _statefulset(obj: Mapping[str, Any]) -> Readiness:
    want = _num(obj, "spec", "replicas", default=1)
    ready, current = _num(obj, "status", "readyReplicas"), _num(obj, "status", "currentReplicas")
    counts = f"{ready}/{want} ready, {current}/{want} current"
    if ready != want:
        return Readiness(IN_PROGRESS, counts)
    if _get(obj, "spec", "updateStrategy", "type", default="RollingUpdate") == "OnDelete":
        return Readiness(CURRENT, f"{ready}/{want} ready")
    if current != want:
        return Readiness(IN_PROGRESS, counts)
    cur_rev, upd_rev = _get(obj, "status", "currentRevision"), _get(obj, "status", "updateRevision")
    if cur_rev and upd_rev and cur_rev != upd_rev:
        return Readiness(IN_PROGRESS, f"{counts}, revision {cur_rev} not yet {upd_rev}")
    return Readiness(CURRENT, counts)


def _daemonset(obj: Mapping[str, Any]) -> Readiness:
    desired, updated, available, ready = (_num(obj, "status", key) for key in (
        "desiredNumberScheduled", "updatedNumberScheduled", "numberAvailable", "numberReady"))
    counts = f"{updated}/{desired} updated, {available}/{desired} available, {ready}/{desired} ready"
    return Readiness(CURRENT if desired == updated == available == ready else IN_PROGRESS, counts)


def _pvc(obj: Mapping[str, Any]) -> Readiness:
    phase = _get(obj, "status", "phase", default="Pending")
    if phase == "Bound":
        return Readiness(CURRENT, "phase Bound")
    if phase == "Lost":
        return _failed("Lost", "the bound volume is gone")
    return Readiness(IN_PROGRESS, f"phase {phase}")


def _service(obj: Mapping[str, Any]) -> Readiness:
    if _get(obj, "spec", "type") == "LoadBalancer" and not _get(obj, "status", "loadBalancer", "ingress"):
        return Readiness(IN_PROGRESS, "waiting for a load balancer address")
    return Readiness(CURRENT, "exists")


def _exists(obj: Mapping[str, Any]) -> Readiness:
    """Plain objects are done once they exist; a Namespace can still be on its way out."""
    if _get(obj, "status", "phase") == "Terminating":
        return Readiness(TERMINATING, "phase Terminating")
    return Readiness(CURRENT, "exists")


def _custom(obj: Mapping[str, Any]) -> Readiness:
    cond = _true(obj, "Failed", "Stalled")
    if cond is not None:
        return _failed(cond.get("reason") or cond["type"], cond.get("message"))
    cond = _true(obj, "Reconciling")
    if cond is not None:
        return Readiness(IN_PROGRESS, _join("Reconciling=True", cond.get("reason"), cond.get("message")))
    for ctype in _READY_TYPES:
        cond = _condition(obj, ctype)
        if cond is not None:
            if cond.get("status") == "True":
                return Readiness(CURRENT, f"{ctype}=True")
            return Readiness(IN_PROGRESS, _join(f"{ctype}={cond.get('status') or 'Unknown'}",
                                                cond.get("reason"), cond.get("message")))
    phase = _get(obj, "status", "phase")
    if phase is None:
        return Readiness(CURRENT, "exists")
    if str(phase).lower() in _DONE_PHASES:
        return Readiness(CURRENT, f"phase {phase}")
    if str(phase).lower() in ("failed", "error"):
        return _failed(str(phase), _get(obj, "status", "message"))
    return Readiness(IN_PROGRESS, f"phase {phase}")


_BY_KIND: Dict[str, Callable[[Mapping[str, Any]], Readiness]] = {
    "Job": _job, "Pod": _pod, "Deployment": _deployment, "StatefulSet": _statefulset,
    "DaemonSet": _daemonset, "PersistentVolumeClaim": _pvc, "Service": _service,
    "Namespace": _exists, "ConfigMap": _exists, "Secret": _exists,
    "ServiceAccount": _exists, "Role": _exists, "RoleBinding": _exists, "ClusterRole": _exists,
    "ClusterRoleBinding": _exists, "Ingress": _exists, "NetworkPolicy": _exists,
}


def _builtin(api_version: str) -> bool:
    """Core, apps, batch and the *.k8s.io groups; anything else may reuse a kind name."""
    group = api_version.rpartition("/")[0]
    return "." not in group or group.endswith(".k8s.io")


def assess(obj: Optional[Mapping[str, Any]]) -> Readiness:
    """Readiness of one object as returned by ``resource.get(...).to_dict()``."""
    if obj is None:
        return Readiness(NOT_FOUND, "not found")
    if not isinstance(obj, Mapping) or not obj.get("kind"):
        return Readiness(UNKNOWN, "not a Kubernetes object (no kind)")
    if _get(obj, "metadata", "deletionTimestamp"):
        return Readiness(TERMINATING, f"deletion requested at {obj['metadata']['deletionTimestamp']}")
    kind = obj["kind"]
    generation = _get(obj, "metadata", "generation")
    observed = _get(obj, "status", "observedGeneration")
    if generation is not None and (observed is not None or kind in _GENERATION_KINDS):
        if int(observed or 0) < int(generation):
            return Readiness(IN_PROGRESS,
                             f"waiting for the controller to observe generation {generation}")
    handler = _BY_KIND.get(kind) if _builtin(str(obj.get("apiVersion", ""))) else None
    return (handler or _custom)(obj)
