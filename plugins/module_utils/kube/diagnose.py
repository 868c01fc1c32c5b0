# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Say why objects are not ready: the pods behind a Job or a Deployment, and
the last lines a failed container wrote."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common import compat
from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import core_v1_api
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import answered
from ansible_collections.lcm.openstack.plugins.module_utils.kube.failures import FAILURE_THRESHOLD, UNSCHEDULABLE
from ansible_collections.lcm.openstack.plugins.module_utils.kube.readiness import (
    CURRENT, Readiness, explain_pod,
)

LOG_LINES = 20
LOG_CHARS = 4000


def pods_of(dyn: Any, namespace: str, obj: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The pods a Job, Deployment, StatefulSet or DaemonSet runs (a Pod: itself)."""
    kind = obj.get("kind")
    if kind == "Pod":
        return [obj]
    if kind == "Job":
        uid = obj["metadata"].get("uid", "")
        selector = f"batch.kubernetes.io/controller-uid={uid}"
    elif kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"):
        labels = ((obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
        if not labels:
            return []
        selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    else:
        return []
    with answered(caught=compat.ApiException):
        pods = dyn.resources.get(api_version="v1", kind="Pod")
        return pods.get(namespace=namespace, label_selector=selector).to_dict().get("items") or []
    return []


def why(dyn: Any, namespace: str, key: Tuple[str, str], state: Readiness,
        obj: Optional[Dict[str, Any]], pods: Optional[List[Dict[str, Any]]] = None) -> str:
    """One line: the object, its state, and what its pods are doing. `pods`, when
    the waiter saw them, saves asking the cluster again."""
    kind, name = key
    line = f"{kind} {name}: {state.message or state.state}"
    # The failure rules' own message names the pod, its container and its exit.
    if obj is None or state.state == CURRENT or state.reason in (FAILURE_THRESHOLD, UNSCHEDULABLE):
        return line
    pod_notes = [f"pod {p['metadata']['name']} {explain_pod(p)}"
                 for p in (pods if pods is not None else pods_of(dyn, namespace, obj))
                 if kind != "Pod" and (p.get("status") or {}).get("phase") != "Succeeded"]
    return "; ".join([line] + pod_notes[:3])


def log_tail(dyn: Any, namespace: str, obj: Dict[str, Any],
             pods: Optional[List[Dict[str, Any]]] = None) -> str:
    """The end of the failing container's output: its termination message (the
    kubelet's copy of the log tail with FallbackToLogsOnError), else its log."""
    for pod in reversed(pods if pods else pods_of(dyn, namespace, obj)):
        status = pod.get("status") or {}
        for cstatus in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
            term = (cstatus.get("state") or {}).get("terminated") or \
                (cstatus.get("lastState") or {}).get("terminated") or {}
            if not term or term.get("exitCode", 0) == 0:
                continue
            if term.get("message"):
                return _tail(term["message"])
            with answered(caught=(compat.ApiException, ValueError)):
                text = core_v1_api()(dyn.client).read_namespaced_pod_log(
                    pod["metadata"]["name"], namespace, container=cstatus.get("name"),
                    tail_lines=LOG_LINES)
                if text:
                    return _tail(text)
            return f"container {cstatus.get('name')} exited {term.get('exitCode')} ({term.get('reason', '')}); no log available"
    return ""


def _tail(text: str) -> str:
    lines = text.rstrip().splitlines()[-LOG_LINES:]
    return "\n".join(lines)[-LOG_CHARS:]
