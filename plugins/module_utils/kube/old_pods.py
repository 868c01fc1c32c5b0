# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which pods of a set of workloads still run an older pod template than the
workload's current one, and waiting, by watch, until there is none.

A database's contract migrations drop what the old code still reads, so they
may start only once no pod of the old release is left. A workload's status
saying it is updated is not enough: a terminating pod may still serve
requests with the old code, and neither the controllers' counts nor kstatus
count terminating pods. So the pods themselves are looked at, each tied to
its workload by its controller's ownerReference (by uid), and a pod is old:

- of a Deployment (Pod -> ReplicaSet -> Deployment): when its
  `pod-template-hash` label is not that of the Deployment's current
  ReplicaSet, the one whose `deployment.kubernetes.io/revision` annotation is
  the Deployment's own (the controller writes it when it creates or adopts
  the ReplicaSet of the current template; a rollback to an older template
  gives that ReplicaSet the newest revision). A pod whose ReplicaSet is
  already deleted (`revisionHistoryLimit`) is tied by the ReplicaSet's name,
  which is the Deployment's name and the pod's hash;
- of a StatefulSet: when its `controller-revision-hash` label is not the
  StatefulSet's `status.updateRevision`;
- of a DaemonSet, whose status names no revision: when its
  `controller-revision-hash` label is not that of the newest ControllerRevision
  the DaemonSet owns (the highest `revision`; the controller gives the
  revision of the current template the highest number, a rollback included);
- of any of them: when it is terminating (`metadata.deletionTimestamp`), of
  whatever revision, since it may still serve until it is gone;
- of any of them: while the workload's controller has not observed its
  current generation (`status.observedGeneration`), or its current
  ReplicaSet or ControllerRevision is not seen yet: until then, which
  template is current is not known, and every pod of it counts.

The wait watches the workloads' kinds, ReplicaSets (for Deployments),
ControllerRevisions (for DaemonSets) and the namespace's Pods (kube/watch.py:
list, then watch from there; resumed after a break, listed again on 410).
Each kind is its own stream, so when what the streams show together says no
old pod is left, one read confirms it in causal order (the workloads, then
their ReplicaSets and ControllerRevisions, then the pods: each read sees at
least what the one before it did) before the wait returns; when it does not,
the events that bring the streams level are waited for. No polling.
"""

from __future__ import annotations

import queue
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common import transient
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError, KubeError
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import WORKLOAD_KINDS
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import api_call, api_error
from ansible_collections.lcm.openstack.plugins.module_utils.kube.plain import plain
from ansible_collections.lcm.openstack.plugins.module_utils.kube.watch import KindWatch

APPS = "apps/v1"
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
TEMPLATE_HASH_LABEL = "pod-template-hash"
REVISION_HASH_LABEL = "controller-revision-hash"
REPLICA_SET, REVISION, POD = "ReplicaSet", "ControllerRevision", "Pod"

Obj = Mapping[str, Any]
Workload = Tuple[str, str]  # (kind, name)
Progress = Callable[[str], None]


@dataclass(frozen=True)
class OldPod:
    """A pod of a workload that still runs, or may run, an older template."""

    pod: str
    kind: str  # the workload's
    workload: str
    revision: Optional[str] = None  # the pod's, when it is not the current one
    current: Optional[str] = None  # the workload's current revision
    terminating_since: Optional[str] = None
    unknown: Optional[str] = None  # why the current revision is not known yet

    def why(self) -> str:
        if self.unknown:
            parts = [self.unknown]
        elif self.revision is not None:
            parts = [f"revision {self.revision}, current {self.current}"]
        else:
            parts = []
        if self.terminating_since is not None:
            parts.append(f"terminating since {self.terminating_since}")
        return ", ".join(parts)

    def describe(self) -> str:
        return f"{self.pod} ({self.kind} {self.workload}, {self.why()})"


@dataclass(frozen=True)
class _Current:
    """A workload's current revision as the pods carry it (`label`), and as
    people name it (`name`); `unknown` says why it is not known yet."""

    label: Optional[str] = None
    name: Optional[str] = None
    unknown: Optional[str] = None
    names: Optional[Mapping[Optional[str], Optional[str]]] = None  # a pod's label value -> its revision's name


def old_pods(workloads: Iterable[Obj], pods: Iterable[Obj], replica_sets: Iterable[Obj] = (),
             revisions: Iterable[Obj] = ()) -> List[OldPod]:
    """Every pod of the workloads that is old (see the module's doc), by pod name.

    `workloads` are the live Deployments, StatefulSets and DaemonSets;
    `pods`, `replica_sets` and `revisions` (ControllerRevisions) those of
    their namespace: what belongs to none of the workloads is ignored."""
    by_uid = {_meta(w).get("uid"): w for w in workloads if w.get("kind") in WORKLOAD_KINDS}
    replica_sets, revisions = list(replica_sets), list(revisions)
    rs_by_uid = {_meta(rs).get("uid"): rs for rs in replica_sets}
    current = {uid: _current(w, replica_sets, revisions) for uid, w in by_uid.items()}
    out = []
    for pod in pods:
        workload = _workload_of(pod, by_uid, rs_by_uid)
        if workload is None:
            continue
        old = _old(pod, workload, current[_meta(workload).get("uid")])
        if old is not None:
            out.append(old)
    return sorted(out, key=lambda o: o.pod)


def summary(old: Sequence[OldPod]) -> str:
    """`waiting for 2 old pods to go: a (Deployment x, revision 3, current 4), b (...)`."""
    if not old:
        return "no old pod left"
    noun = "old pod" if len(old) == 1 else "old pods"
    return f"waiting for {len(old)} {noun} to go: " + ", ".join(o.describe() for o in old)


def _meta(obj: Obj) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _labels(obj: Obj) -> Mapping[str, str]:
    return _meta(obj).get("labels") or {}


def _controller(obj: Obj) -> Optional[Mapping[str, Any]]:
    for ref in _meta(obj).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def _workload_of(pod: Obj, by_uid: Mapping[Any, Obj], rs_by_uid: Mapping[Any, Obj]) -> Optional[Obj]:
    ref = _controller(pod)
    if ref is None:
        return None
    if ref.get("kind") != REPLICA_SET:
        found = by_uid.get(ref.get("uid"))
        return found if found is not None and found.get("kind") == ref.get("kind") else None
    rs = rs_by_uid.get(ref.get("uid"))
    if rs is not None:
        owner = _controller(rs)
        found = by_uid.get(owner.get("uid")) if owner and owner.get("kind") == "Deployment" else None
        return found if found is not None and found.get("kind") == "Deployment" else None
    # The ReplicaSet is gone (an old one, cleaned up): its name was the Deployment's and the pod's hash.
    pod_hash = _labels(pod).get(TEMPLATE_HASH_LABEL)
    for w in by_uid.values():
        if w.get("kind") == "Deployment" and pod_hash and ref.get("name") == f"{_meta(w).get('name')}-{pod_hash}":
            return w
    return None


def _revision(obj: Obj) -> Optional[str]:
    """A Deployment's or ReplicaSet's deployment.kubernetes.io/revision."""
    value = (_meta(obj).get("annotations") or {}).get(REVISION_ANNOTATION)
    return None if value is None else str(value)


def _unobserved(workload: Obj) -> Optional[str]:
    generation = _meta(workload).get("generation")
    observed = (workload.get("status") or {}).get("observedGeneration")
    if generation is not None and (observed is None or observed < generation):
        return f"generation {generation} not yet observed by its controller"
    return None


def _owned_by(objs: Iterable[Obj], workload: Obj) -> List[Obj]:
    uid = _meta(workload).get("uid")
    return [o for o in objs if (_controller(o) or {}).get("uid") == uid]


def _current(workload: Obj, replica_sets: Sequence[Obj], revisions: Sequence[Obj]) -> _Current:
    unobserved = _unobserved(workload)
    if unobserved:
        return _Current(unknown=unobserved)
    kind = workload.get("kind")
    if kind == "StatefulSet":
        update = (workload.get("status") or {}).get("updateRevision")
        return _Current(label=update, name=update) if update else _Current(unknown="no updateRevision in its status")
    if kind == "Deployment":
        owned = _owned_by(replica_sets, workload)
        names = {_labels(rs).get(TEMPLATE_HASH_LABEL): _revision(rs) for rs in owned}
        revision = _revision(workload)
        if revision is None:
            return _Current(unknown=f"no {REVISION_ANNOTATION} annotation yet")
        for rs in owned:
            if _revision(rs) == revision:
                return _Current(label=_labels(rs).get(TEMPLATE_HASH_LABEL), name=revision, names=names)
        return _Current(unknown=f"its ReplicaSet of revision {revision} not seen yet")
    owned = _owned_by(revisions, workload)
    if not owned:
        return _Current(unknown="no ControllerRevision of it seen yet")
    newest = max(owned, key=lambda r: int(r.get("revision") or 0))
    names = {_labels(r).get(REVISION_HASH_LABEL): str(r.get("revision")) for r in owned}
    return _Current(label=_labels(newest).get(REVISION_HASH_LABEL), name=str(newest.get("revision")), names=names)


def _old(pod: Obj, workload: Obj, current: _Current) -> Optional[OldPod]:
    terminating = _meta(pod).get("deletionTimestamp")
    label = TEMPLATE_HASH_LABEL if workload.get("kind") == "Deployment" else REVISION_HASH_LABEL
    carried = _labels(pod).get(label)
    name, kind, owner = _meta(pod).get("name"), workload.get("kind"), _meta(workload).get("name")
    if current.unknown:
        return OldPod(name, kind, owner, terminating_since=terminating, unknown=current.unknown)
    if carried == current.label and not terminating:
        return None
    revision = None
    if carried != current.label:
        revision = (current.names or {}).get(carried) or carried or f"unknown (no {label} label)"
    return OldPod(name, kind, owner, revision=revision, current=current.name, terminating_since=terminating)


# -- the wait -------------------------------------------------------------------------------------

def wait_gone(dyn: Any, namespace: str, workloads: Sequence[Workload], timeout: float,
              progress: Optional[Progress] = None) -> List[str]:
    """Block until no pod of the workloads is old; return the old pods there
    were when the wait began (described), empty when there were none.

    `workloads` are (kind, name) pairs in `namespace`; a workload that does not
    exist has no pod to wait for. `progress` is told `summary()` each time the
    set of old pods changes. At the timeout, KubeError names every old pod
    left and why (its `details["old_pods"]` too)."""
    wanted = _wanted(workloads)
    if not wanted:
        return []
    return _Wait(dyn, namespace, wanted, progress).run(timeout)


def _wanted(workloads: Sequence[Workload]) -> Dict[str, List[str]]:
    """kind -> names, of the kinds that have a pod template rolled by a controller."""
    out: Dict[str, List[str]] = {}
    for kind, name in workloads:
        if kind not in WORKLOAD_KINDS:
            raise InputError(f"{kind} {name}: only the pods of {', '.join(WORKLOAD_KINDS)} have revisions to wait "
                             "for")
        if name not in out.setdefault(kind, []):
            out[kind].append(name)
    return out


class _Wait:
    """The watches of one wait, what they show, and the confirming read."""

    def __init__(self, dyn: Any, namespace: str, wanted: Dict[str, List[str]],
                 progress: Optional[Progress]) -> None:
        self.dyn, self.namespace, self.wanted, self.progress = dyn, namespace, wanted, progress
        kinds = sorted(wanted) + ([REPLICA_SET] if "Deployment" in wanted else []) \
            + ([REVISION] if "DaemonSet" in wanted else []) + [POD]
        self.res = {k: dyn.resources.get(api_version="v1" if k == POD else APPS, kind=k) for k in kinds}
        self.seen: Dict[str, Dict[str, Dict[str, Any]]] = {k: {} for k in kinds}
        self.listed: set = set()
        self.shown: Optional[List[OldPod]] = None
        self.confirmed: List[OldPod] = []  # what the last confirming read found, the streams showing none
        self.broke = ""

    def _selector(self, kind: str) -> Optional[str]:
        """One workload of a kind: watch it alone, not every one of the namespace."""
        names = self.wanted.get(kind) or []
        return f"metadata.name={names[0]}" if len(names) == 1 else None

    def run(self, timeout: float) -> List[str]:
        events: "queue.Queue" = queue.Queue()
        watches = [KindWatch(self.dyn, res, self.namespace, events, (), field_selector=self._selector(kind))
                   for kind, res in self.res.items()]
        deadline = time.monotonic() + timeout
        first: Optional[List[str]] = None
        for w in watches:
            w.start()
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise self._timeout(timeout)
                try:
                    self._seen(*events.get(timeout=remaining))
                    while not events.empty():  # what is queued already, before judging
                        self._seen(*events.get_nowait())
                except queue.Empty:
                    continue
                if len(self.listed) < len(watches):
                    continue
                old = self._old(self.seen)
                if first is None:
                    first = [o.describe() for o in old]
                if old != self.shown:
                    self.shown = old
                    if old and self.progress:
                        self.progress(summary(old))
                if not old:
                    self.confirmed = self._old(self._read())
                    if not self.confirmed:
                        return first
        finally:
            for w in watches:
                w.stop()

    def _seen(self, event: str, w: Any, payload: Any) -> None:
        if event == "ERROR":
            raise api_error(payload, "watch", w.res.name, self.namespace)
        if event == "BREAK":  # the watch resumes by itself
            self.broke = transient.describe(payload)
            return
        objs = self.seen[w.res.kind]
        if event == "LIST":
            self.listed.add(w.res.kind)
            objs.clear()
        for obj in payload:
            if event == "DELETED":
                objs.pop(_meta(obj).get("name"), None)
            else:
                objs[_meta(obj).get("name")] = obj

    def _old(self, seen: Mapping[str, Mapping[str, Obj]]) -> List[OldPod]:
        workloads = [w for kind, names in self.wanted.items() for n in names for w in [seen[kind].get(n)] if w]
        return old_pods(workloads, seen[POD].values(), (seen.get(REPLICA_SET) or {}).values(),
                        (seen.get(REVISION) or {}).values())

    def _read(self) -> Dict[str, Dict[str, Dict[str, Any]]]:
        """Every kind read once, in the order of causes: workloads, then what they own, then pods."""
        out = {}
        for kind, res in self.res.items():  # built in that order
            with api_call("list", res.name, self.namespace):
                items = res.get(namespace=self.namespace, serializer=plain,
                                field_selector=self._selector(kind)).to_dict().get("items") or []
            out[kind] = {_meta(i).get("name"): i for i in items}
        return out

    def _timeout(self, timeout: float) -> KubeError:
        if len(self.listed) < len(self.res):
            missing = sorted(set(self.res) - self.listed)
            text = f"the {', '.join(missing)} of namespace {self.namespace} could not be listed within {timeout:.0f}s"
            return KubeError(text + (f" (last: {self.broke})" if self.broke else ""), old_pods=[])
        left = [o.describe() for o in self._old(self.seen) or self.confirmed]
        return KubeError(f"{len(left)} pod(s) of an older template still in namespace {self.namespace} after "
                         f"{timeout:.0f}s: {', '.join(left)}. A StatefulSet with updateStrategy OnDelete or a "
                         "partition, a DaemonSet with OnDelete, or a rollout stuck on pods that do not become "
                         "Ready keeps them; a terminating pod may be held by a finalizer or its grace period",
                         old_pods=left)
