# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The order a chart declares: openstack-helm's kubernetes-entrypoint.

Each pod's init container names what it waits for (kube/entrypoint.py reads
the DEPENDENCY_* variables).
A phase that applied a Job before the Jobs it waits for would wait forever
(the init container blocks, the wave never completes), so the waves follow
these declarations: a Job runs in the wave after every phase Job it waits
for, directly or through a workload of the chart (keystone's domain-manage
waits for the keystone-api Service, whose Deployment waits for db-sync).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.helm.render import Rendered
# Re-exported: the phase's callers read the declarations from here.
from ansible_collections.lcm.openstack.plugins.module_utils.kube.entrypoint import (  # noqa: F401 pylint: disable=unused-import
    POD_KINDS, Dependency, declared, labels_match, meta_labels, pod_labels)

Key = Tuple[str, str]  # (kind, name)
ENV_FIELD = {"Job": "DEPENDENCY_JOBS", "Service": "DEPENDENCY_SERVICE", "DaemonSet": "DEPENDENCY_DAEMONSET",
             "Pod": "DEPENDENCY_POD_JSON", "CustomResource": "DEPENDENCY_CUSTOM_RESOURCE"}


Lookup = Callable[[Dependency], bool]  # does the cluster have it?


class Graph:
    """Who waits for whom among the objects a chart renders."""

    def __init__(self, rendered: Iterable[Rendered], namespace: str = "") -> None:
        self.namespace = namespace
        self.nodes: Dict[Key, Rendered] = {}
        self.services: Dict[str, Rendered] = {}
        for r in rendered:
            if r.kind in POD_KINDS:
                self.nodes[(r.kind, r.name)] = r
            elif r.kind == "Service":
                self.services[r.name] = r
        self.declared: Dict[Key, List[Dependency]] = {k: declared(r.obj) for k, r in self.nodes.items()}

    def resolve(self, dep: Dependency) -> List[Key]:
        """The rendered objects a dependency waits on (none for what lies outside the chart)."""
        if not self._here(dep.namespace):
            return []
        if dep.kind == "Job" and dep.name:
            return [("Job", dep.name)] if ("Job", dep.name) in self.nodes else []
        if dep.kind == "Job":
            return sorted(k for k, r in self.nodes.items()
                          if k[0] == "Job" and labels_match(meta_labels(r), dep.labels))
        if dep.kind == "Service":
            svc = self.services.get(dep.name)
            selector = tuple(sorted(((svc.obj.get("spec") or {}).get("selector") or {}).items())) if svc else ()
            if not selector:
                return []
            return sorted(k for k, r in self.nodes.items() if labels_match(pod_labels(r), selector))
        if dep.kind == "DaemonSet":
            return [("DaemonSet", dep.name)] if ("DaemonSet", dep.name) in self.nodes else []
        if dep.kind == "Pod":
            return sorted(k for k, r in self.nodes.items() if labels_match(pod_labels(r), dep.labels))
        return []

    def edges(self, key: Key) -> List[Tuple[Dependency, Key]]:
        return [(d, k) for d in self.declared.get(key, []) for k in self.resolve(d) if k != key]

    def levels(self, phase: Iterable[Key]) -> Dict[Key, int]:
        """Level of each phase object: 0 when it waits for no other phase
        object, else one more than the highest of those it waits for, through
        any chain of the chart's objects. A cycle is a PhaseError naming it."""
        phase = [k for k in phase if k in self.nodes]
        members = set(phase)
        before: Dict[Key, Set[Key]] = {k: self._phase_predecessors(k, members) for k in phase}
        level: Dict[Key, int] = {}
        visiting: List[Key] = []

        def visit(key: Key) -> int:
            if key in level:
                return level[key]
            if key in visiting:
                loop = visiting[visiting.index(key):] + [key]
                raise PhaseError("the chart's dependencies form a cycle: " + " waits for ".join(
                    f"{k[0]} {k[1]}" for k in loop) + "; no order can run them. Fix dependencies.static "
                    "in the values, or leave one of them out (source.templates)")
            visiting.append(key)
            level[key] = 1 + max((visit(p) for p in sorted(before[key])), default=-1)
            visiting.pop()
            return level[key]

        for key in phase:
            visit(key)
        return level

    def _phase_predecessors(self, start: Key, members: Set[Key]) -> Set[Key]:
        """Phase objects `start` waits for, directly or through objects outside the phase."""
        found: Set[Key] = set()
        seen: Set[Key] = {start}
        todo = [start]
        while todo:
            for _edge, nxt in self.edges(todo.pop()):
                if nxt in members:
                    found.add(nxt)
                elif nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return found

    def _here(self, namespace: str) -> bool:
        return not namespace or not self.namespace or namespace == self.namespace


def check(chosen: Sequence[Rendered], rendered: Iterable[Rendered], namespace: str,
          exists: Lookup, release_creates: bool = False,
          provided: Optional[Callable[[], Mapping[Tuple[str, str, str], str]]] = None) -> List[str]:
    """Refuse, before anything is applied, a phase whose Jobs or Pods wait for
    a Job or a Service that the phase does not create and the cluster does
    not have: it would wait until its timeout. `exists` asks the cluster.

    With `release_creates` (the check mode of a first install: the release is
    not deployed yet, so its Services are not in the cluster), a Service the
    chart renders outside the phase counts as there: the release creates it
    before the phase runs. A Job never does: it must be in the phase or the
    cluster.

    `provided` returns, when first needed, a mapping of (kind, namespace,
    name) to the service of the same site whose flow, running beside this
    one, creates it (nova's API Service for neutron's agents): the pod's own
    init container waits for it, as it does for anything external. Returns
    those, each as a line naming the object and the flow that creates it."""
    rendered = list(rendered)
    graph = Graph(rendered, namespace)
    own = {(r.kind, r.name) for r in chosen}
    coming = set(graph.services) if release_creates else set()
    by_key = {(r.kind, r.name): r for r in rendered}
    problems: List[str] = []
    beside: List[str] = []
    for r in chosen:
        if r.kind not in POD_KINDS:
            continue
        for dep in declared(r.obj):
            if dep.kind not in ("Job", "Service"):
                continue
            if dep.kind == "Job" and any(k in own for k in graph.resolve(dep)):
                continue
            if dep.kind == "Service" and graph._here(dep.namespace) and (
                    ("Service", dep.name) in own or dep.name in coming):
                continue
            full = Dependency(dep.kind, dep.namespace or namespace, dep.name, dep.labels, dep.env)
            creator = provided().get((full.kind, full.namespace, full.name)) if provided is not None else None
            if creator:
                line = f"{full.describe()}: {creator}'s flow, running beside this one, creates it"
                if line not in beside:
                    beside.append(line)
                continue  # another flow of the site creates it: the init container waits
            if exists(full):
                continue  # outside the phase, and there: external
            hint = ""
            template = by_key.get((dep.kind, dep.name))
            if template is not None and template.source:
                hint = f" (the chart renders it from {template.source}: add it to source.templates)"
            problems.append(f"{r.kind} {r.name} waits for {full.describe()} ({dep.env}), which this phase "
                            f"does not create and the cluster does not have{hint}")
    if problems:
        raise PhaseError("; ".join(problems) + ". Run the phase that creates it first, or change "
                         "dependencies.static in the values")
    return beside


def cluster_lookup(dyn: Any) -> Lookup:
    """A Lookup that asks the cluster through a kubernetes dynamic client."""
    from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import NotFoundError
    from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import api_call

    api = {"Job": "batch/v1", "Service": "v1", "DaemonSet": "apps/v1", "Pod": "v1", "ConfigMap": "v1", "Secret": "v1"}

    def exists(dep: Dependency) -> bool:
        if dep.kind not in api:
            return False
        res = dyn.resources.get(api_version=api[dep.kind], kind=dep.kind)
        with api_call("get", res.name, dep.namespace, handled=(NotFoundError,)):
            if dep.name:
                res.get(name=dep.name, namespace=dep.namespace)
                return True
            selector = ",".join(f"{k}={v}" for k, v in dep.labels)
            return bool(res.get(namespace=dep.namespace, label_selector=selector).to_dict().get("items"))
        return False

    return exists
