# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a Service's EndpointSlices list, and waiting by watch until they list
what a traffic shift wants.

The EndpointSlice controller, not the Service, decides where traffic goes: a
selector change is done once the slices say so. They are listed once and
watched from that list's resourceVersion (kube/watch.py: resumed when a
watch ends, listed again on 410 Gone); each endpoint's pod is read once, by
uid, for the label the Service selects on.
"""

from __future__ import annotations

import queue
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import NotFoundError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import api_call, api_error
from ansible_collections.lcm.openstack.plugins.module_utils.kube.readiness import explain_pod
from ansible_collections.lcm.openstack.plugins.module_utils.kube.watch import KindWatch

SERVICE_NAME_LABEL = "kubernetes.io/service-name"
SLICE_API = "discovery.k8s.io/v1"

# pod uid (or name) -> its labels, None when the pod is gone
PodLabels = Callable[[str, str], Optional[Mapping[str, str]]]


@dataclass(frozen=True)
class Endpoint:
    slice: str
    pod: str  # the targetRef's pod name; the address when there is none
    ready: bool
    track: Optional[str]  # the pod's value of the selector label
    found: bool = True  # False: the pod is gone, the slice not yet updated
    labels: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)

    def as_dict(self, with_track: bool = True) -> Dict[str, Any]:
        out = {"pod": self.pod, "ready": self.ready}
        return dict(out, track=self.track) if with_track else out

    def why(self, label: str) -> str:
        if not self.found:
            return "pod not found"
        return f"{label}={self.track}" if self.track is not None else f"no {label} label"


@dataclass(frozen=True)
class Goal:
    """What the slices must list once the Service selects `label=value`.

    A rollout wants every ready endpoint on `value` and at least `min_ready`
    of them; a drain wants the pods in `gone` no longer listed at all. With
    `selector` (the gate mode) an endpoint is wanted when its pod's labels
    match that selector, whatever its value of `label`."""

    label: str
    value: Optional[str]
    min_ready: int = 0
    gone: FrozenSet[str] = frozenset()
    rollout: bool = False
    selector: Optional[Mapping[str, str]] = None

    def wants(self, endpoint: Endpoint) -> bool:
        if self.selector is None:
            return endpoint.track == self.value
        return endpoint.found and all(endpoint.labels.get(k) == v for k, v in self.selector.items())

    def why(self, endpoint: Endpoint) -> str:
        if self.selector is None or not endpoint.found:
            return endpoint.why(self.label)
        return "not a pod of the release's selector"


def endpoints_of(slices: Iterable[Mapping[str, Any]], label: Optional[str], labels_of: PodLabels) -> List[Endpoint]:
    """Every endpoint of the slices, with its pod's labels and value of `label`."""
    out = []
    for sl in sorted(slices, key=lambda s: s["metadata"]["name"]):
        for ep in sl.get("endpoints") or []:
            ref = ep.get("targetRef") or {}
            ready = (ep.get("conditions") or {}).get("ready") is not False  # unset means ready
            if ref.get("kind") != "Pod":
                out.append(Endpoint(sl["metadata"]["name"], ",".join(ep.get("addresses") or []), ready, None, False))
                continue
            labels = labels_of(ref.get("uid") or ref["name"], ref["name"])
            track = None if labels is None or label is None else labels.get(label)
            out.append(Endpoint(sl["metadata"]["name"], ref["name"], ready, track, labels is not None,
                                dict(labels or {})))
    return out


def unmet(goal: Goal, endpoints: List[Endpoint]) -> List[str]:
    """Why the slices do not list what the goal wants yet; empty when they do."""
    problems = [f"EndpointSlice {e.slice} still lists pod {e.pod} ({goal.why(e)})"
                for e in endpoints
                if e.pod in goal.gone or (goal.rollout and e.ready and not goal.wants(e))]
    if goal.rollout:
        ready = len({e.pod for e in endpoints if e.ready and goal.wants(e)})
        if ready < goal.min_ready:
            problems.append("no ready endpoint" if not ready else
                            f"{ready} ready endpoint(s) of {goal.min_ready} wanted")
    return problems


def selector_text(selector: Mapping[str, str]) -> str:
    """A selector as a label selector string, keys sorted."""
    return ",".join(f"{k}={v}" for k, v in sorted(selector.items()))


def pods_summary(pods: List[Mapping[str, Any]], selects: str) -> str:
    """`pods with track=2025.2: 2 found, 1 not Ready (pod x: Pending: Unschedulable)`."""
    if not pods:
        return f"pods with {selects}: 0 found"
    not_ready = [p for p in pods if not _ready(p)]
    text = f"pods with {selects}: {len(pods)} found, {len(not_ready)} not Ready"
    if not_ready:
        first = not_ready[0]
        text += f" (pod {first['metadata']['name']}: {explain_pod(first)}" + (
            f", and {len(not_ready) - 1} more)" if len(not_ready) > 1 else ")")
    return text


def _ready(pod: Mapping[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


@dataclass
class Settled:
    met: bool
    endpoints: List[Endpoint]
    problems: List[str]


class SliceWatch:
    """The EndpointSlices of one Service, listed or waited on by watch."""

    def __init__(self, dyn: Any, namespace: str, service: str, label: Optional[str]) -> None:
        self.dyn, self.namespace, self.service, self.label = dyn, namespace, service, label
        self.slices = dyn.resources.get(api_version=SLICE_API, kind="EndpointSlice")
        self.pods = dyn.resources.get(api_version="v1", kind="Pod")
        self._labels: Dict[str, Optional[Mapping[str, str]]] = {}
        self.selector = f"{SERVICE_NAME_LABEL}={service}"

    def snapshot(self) -> List[Endpoint]:
        with api_call("list", "endpointslices", self.namespace):
            items = self.slices.get(namespace=self.namespace, label_selector=self.selector).to_dict()
        return endpoints_of(items.get("items") or [], self.label, self.labels_of)

    def labels_of(self, key: str, name: str) -> Optional[Mapping[str, str]]:
        """A pod's labels, read once per pod uid (a relabelled pod is a new pod in a rollout)."""
        if key not in self._labels:
            with api_call("get", "pods", self.namespace, handled=(NotFoundError,)) as gone:
                pod = self.pods.get(name=name, namespace=self.namespace).to_dict()
                self._labels[key] = (pod.get("metadata") or {}).get("labels") or {}
            if gone:
                self._labels[key] = None
        return self._labels[key]

    def list_pods(self, selector: Mapping[str, str]) -> List[Dict[str, Any]]:
        """The pods a selector picks now."""
        with api_call("list", "pods", self.namespace):
            return self.pods.get(namespace=self.namespace,
                                 label_selector=selector_text(selector)).to_dict().get("items") or []

    def pods_selected(self, selector: Mapping[str, str]) -> str:
        """One line on the pods a selector picks: how many, and why they are not Ready."""
        selects = (f"{self.label}={selector.get(self.label)}" if self.label is not None
                   else selector_text(selector))
        return pods_summary(self.list_pods(selector), selects)

    def wait(self, goal: Goal, timeout: float,
             on_change: Optional[Callable[[List[str]], None]] = None) -> Settled:
        """Block until the slices meet the goal or the timeout; no sleeping, no polling."""
        events: "queue.Queue" = queue.Queue()
        watch = KindWatch(self.dyn, self.slices, self.namespace, events, (), label_selector=self.selector)
        watch.start()
        slices: Dict[str, Dict[str, Any]] = {}
        listed = False
        endpoints: List[Endpoint] = []
        problems = [f"the EndpointSlices of Service {self.service} could not be listed"]
        reported: Optional[List[str]] = None
        deadline = time.monotonic() + timeout
        try:
            while True:
                if listed:
                    endpoints = endpoints_of(slices.values(), self.label, self.labels_of)
                    problems = unmet(goal, endpoints)
                    if not problems:
                        return Settled(True, endpoints, [])
                    if on_change and problems != reported:
                        on_change(problems)
                        reported = problems
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return Settled(False, endpoints, problems)
                try:
                    kind, _w, payload = events.get(timeout=remaining)
                except queue.Empty:
                    continue
                if kind == "ERROR":
                    raise api_error(payload, "watch", "endpointslices", self.namespace)
                if kind == "BREAK":  # a dropped connection: the watch resumes by itself
                    continue
                listed = listed or kind == "LIST"
                slices = apply_event(slices, kind, payload)
        finally:
            watch.stop()


def apply_event(slices: Dict[str, Dict[str, Any]], kind: str,
                payload: List[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """The slices after one event of the watch: a (re-)list replaces them all."""
    if kind == "LIST":
        return {s["metadata"]["name"]: s for s in payload}
    out = dict(slices)
    for s in payload:
        if kind == "DELETED":
            out.pop(s["metadata"]["name"], None)
        else:
            out[s["metadata"]["name"]] = s
    return out
