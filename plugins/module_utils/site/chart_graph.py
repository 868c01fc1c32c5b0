# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The order of a site, read from what its charts render.

Every openstack-helm pod says what it waits for in its kubernetes-entrypoint
init container (`phase/waves.py`): a Service with ready endpoints, a
Job that completed, a DaemonSet, a pod with given labels. Read across all the
releases of a site, each of those names an object that some release renders,
and so a release the waiting one depends on. That is the site's order, as the
charts state it, for any chart: no name is guessed.

Two releases may depend on each other at the pod level (neutron's agents wait
for nova's API Service, nova-compute for neutron-server and for a libvirt pod
on its node, libvirt for neutron's openvswitch agent). That is no cycle of
pods, only of releases: their flows run side by side and the init containers
order the pods. A cycle of pods (a pod that, through others, waits for
itself) can never start, and is refused, naming the pods.

A dependency that no release of the site renders is looked up in the
cluster; one that is not there either will never be created, and is an error
naming both ends before anything is applied.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import SiteError
from ansible_collections.lcm.openstack.plugins.module_utils.helm.render import Rendered
from ansible_collections.lcm.openstack.plugins.module_utils.kube import pod_config
from ansible_collections.lcm.openstack.plugins.module_utils.kube.entrypoint import (
    POD_KINDS, Dependency, declared, labels_match, meta_labels, pod_labels)
from ansible_collections.lcm.openstack.plugins.module_utils.site.graph import find_cycle

Key = Tuple[str, str]  # (namespace, service)
PodKey = Tuple[str, str, str, str]  # (namespace, service, kind, name)
Lookup = Callable[[Dependency], bool]
# Kinds a dependency names that the site's releases render and a flow creates.
PROVIDED_KINDS = ("Service", "Job", "DaemonSet", "Pod")
# Reasons kept per pair of services: enough to say why, not every pod.
REASONS_KEPT = 3


@dataclass
class Wait:
    """One pod's dependency that another release of the site renders."""

    waiter: PodKey
    dependency: Dependency  # namespace filled in
    providers: List[Key]

    def text(self) -> str:
        return f"{self.waiter[2]} {self.waiter[3]} waits for {self.dependency.describe()} ({self.dependency.env})"


@dataclass
class SiteGraph:
    """What the site's charts say about the order of its releases."""

    # service -> the services it depends on -> why (a few pod-level reasons)
    edges: Dict[Key, Dict[Key, List[str]]] = field(default_factory=dict)
    # service -> what it waits for that another release renders (kind, namespace, name) -> that release
    provided: Dict[Key, Dict[Tuple[str, str, str], Key]] = field(default_factory=dict)
    # pods of one release waiting on pods of another, for the cycle check
    pod_edges: Dict[PodKey, Set[PodKey]] = field(default_factory=dict)


class Renders:
    """The rendered objects of every service of a site, indexed by what they provide."""

    def __init__(self, renders: Mapping[Key, Sequence[Rendered]]) -> None:
        self.renders = {k: list(v) for k, v in renders.items()}
        self.pods: Dict[PodKey, Rendered] = {}
        self.named: Dict[Tuple[str, str, str], List[Key]] = {}  # (kind, namespace, name) -> services
        for key, objects in self.renders.items():
            for r in objects:
                self.named.setdefault((r.kind, key[0], r.name), []).append(key)
                if r.kind in POD_KINDS:
                    self.pods[(key[0], key[1], r.kind, r.name)] = r

    def providers(self, dep: Dependency) -> Tuple[List[Key], List[PodKey]]:
        """The services that render what `dep` waits for, and the pods it waits on."""
        ns = dep.namespace
        if dep.kind in ("Job", "DaemonSet") and dep.name:
            pods = [p for p in self.pods if p[0] == ns and p[2] == dep.kind and p[3] == dep.name]
            return sorted(set(self.named.get((dep.kind, ns, dep.name), []))), pods
        if dep.kind == "Job":
            pods = [p for p, r in self.pods.items()
                    if p[0] == ns and p[2] == "Job" and labels_match(meta_labels(r), dep.labels)]
            return sorted({(p[0], p[1]) for p in pods}), pods
        if dep.kind == "Service":
            owners = sorted(set(self.named.get(("Service", ns, dep.name), [])))
            pods: List[PodKey] = []
            for owner in owners:
                for r in self.renders[owner]:
                    if r.kind == "Service" and r.name == dep.name:
                        selector = tuple(sorted((((r.obj.get("spec") or {}).get("selector")) or {}).items()))
                        pods += [p for p, pr in self.pods.items()
                                 if p[0] == ns and selector and labels_match(pod_labels(pr), selector)]
            return owners, sorted(set(pods))
        if dep.kind == "Pod":
            pods = [p for p, r in self.pods.items() if p[0] == ns and labels_match(pod_labels(r), dep.labels)]
            return sorted({(p[0], p[1]) for p in pods}), sorted(pods)
        return [], []


def derive(renders: Mapping[Key, Sequence[Rendered]], exists: Optional[Lookup] = None,
           external: bool = False) -> SiteGraph:
    """The release-level order of a site from its renders (see the module docstring).

    `exists` asks the cluster for a dependency no release of the site renders;
    with `external` (another run of the same site deploys part of it) such a
    dependency is left to the init container. Raises SiteError for a
    dependency nothing will create, and for a cycle of pods."""
    index = Renders(renders)
    out = SiteGraph(edges={k: {} for k in index.renders}, provided={k: {} for k in index.renders})
    missing: List[str] = []
    for pod, r in sorted(index.pods.items()):
        own: Key = (pod[0], pod[1])
        for dep in declared(r.obj):
            if dep.kind not in PROVIDED_KINDS:
                continue
            dep = Dependency(dep.kind, dep.namespace or pod[0], dep.name, dep.labels, dep.env)
            services, pods = index.providers(dep)
            out.pod_edges.setdefault(pod, set()).update(p for p in pods if p != pod)
            others = [s for s in services if s != own]
            if own in services:
                continue  # the release's own object: its phases order it
            if others:
                wait = Wait(pod, dep, others)
                for other in others:
                    reasons = out.edges[own].setdefault(other, [])
                    if len(reasons) < REASONS_KEPT and wait.text() not in reasons:
                        reasons.append(wait.text())
                if dep.name and dep.kind in ("Service", "Job"):
                    out.provided[own].setdefault((dep.kind, dep.namespace, dep.name), others[0])
                continue
            if external or (exists is not None and exists(dep)):
                continue
            missing.append(f"{pod[1]}: {Wait(pod, dep, []).text()}, which no service of the site renders and "
                           "the cluster does not have")
    if missing:
        raise SiteError("; ".join(sorted(set(missing))) + ". Add the service that renders it to the site "
                        "(group openstack_services), or change dependencies.static in the waiting service's values")
    _config_needs(index, out, exists, external)
    _refuse_pod_cycle(out.pod_edges)
    return out


def _config_needs(index: Renders, out: SiteGraph, exists: Optional[Lookup], external: bool) -> None:
    """The ConfigMaps and Secrets each pod cannot start without (kube/pod_config.py):
    rendered by another service of the site, a dependency on it; by none, and
    neither creatable at run time by the service's own Roles nor in the cluster,
    an error naming both ends."""
    can_create = {k: pod_config.creatable([r.obj for r in objects]) for k, objects in index.renders.items()}
    missing: List[str] = []
    for pod, r in sorted(index.pods.items()):
        own: Key = (pod[0], pod[1])
        for kind, name, how in pod_config.required(r.obj):
            services = sorted(set(index.named.get((kind, pod[0], name), [])))
            if own in services:
                continue
            text = f"{pod[2]} {pod[3]} needs {kind} {pod[0]}/{name} ({how})"
            for other in services:
                reasons = out.edges[own].setdefault(other, [])
                if len(reasons) < REASONS_KEPT and text not in reasons:
                    reasons.append(text)
            if services or kind in can_create[own] or external:
                continue
            if exists is not None and exists(Dependency(kind, pod[0], name, env=how)):
                continue
            missing.append(f"{pod[1]}: {text}, which no service of the site renders, the cluster does not have, "
                           f"and {pod[1]} cannot create: its pods would never start")
    if missing:
        raise SiteError("; ".join(sorted(set(missing))) + ". Add the service that renders it to the site "
                        "(group openstack_services), or switch off what needs it in the waiting service's values")


def _refuse_pod_cycle(pod_edges: Mapping[PodKey, Iterable[PodKey]]) -> None:
    nodes: Dict[PodKey, List[PodKey]] = {}
    for pod, deps in pod_edges.items():
        nodes.setdefault(pod, []).extend(sorted(deps))
        for dep in deps:
            nodes.setdefault(dep, [])
    cycle = find_cycle(nodes)
    if cycle:
        chain = " waits for ".join(f"{p[2]} {p[3]} ({p[1]})" for p in cycle)
        raise SiteError(f"the site's pods wait for each other in a cycle: {chain}; no order can start them. "
                        "Change dependencies.static in the values of one of these services")


def components(edges: Mapping[Key, Iterable[Key]]) -> List[List[Key]]:
    """The strongly connected components of the release graph (Tarjan's,
    without recursion), each sorted, in a stable order: the releases of one
    component depend on each other and are deployed side by side."""
    index: Dict[Key, int] = {}
    low: Dict[Key, int] = {}
    stack: List[Key] = []
    on_stack: Set[Key] = set()
    found: List[List[Key]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    members.append(top)
                    if top == node:
                        break
                found.append(sorted(members))
    return sorted(found)
