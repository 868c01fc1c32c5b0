# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The order of a site's services: a cycle, the levels, the critical path.

The graph is `edges`: each node with the nodes it depends on, every node a
key (a node without dependencies maps to []). Nodes are any sortable
values; the site uses (namespace, service). Everything here is
deterministic, sorted by node, so two runs of the same inventory print the
same plan, and none of it recurses, so no depth of site reaches Python's
recursion limit.
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Sequence, Tuple, TypeVar

Node = TypeVar("Node")
Edges = Mapping[Node, Sequence[Node]]


def find_cycle(edges: Edges) -> List[Node]:
    """One cycle, as the chain a -> b -> c -> a (each depends on the next,
    the first node again at the end, starting at its smallest node), or []
    when there is none. An actual cycle, so that the error can name what
    to cut rather than say only that one exists."""
    done = set()
    for start in sorted(edges):
        if start in done:
            continue
        path: List[Node] = [start]
        on_path = {start}
        todo = [iter(sorted(edges[start]))]
        while todo:
            nxt = next(todo[-1], None)
            if nxt is None:
                on_path.discard(path[-1])
                done.add(path.pop())
                todo.pop()
            elif nxt in on_path:
                return _rotated(path[path.index(nxt):])
            elif nxt not in done:
                path.append(nxt)
                on_path.add(nxt)
                todo.append(iter(sorted(edges[nxt])))
    return []


def _rotated(cycle: List[Node]) -> List[Node]:
    first = cycle.index(min(cycle))
    ring = cycle[first:] + cycle[:first]
    return ring + [ring[0]]


def order(edges: Edges) -> List[Node]:
    """The nodes, each after every node it depends on (the graph has no cycle)."""
    waiting = {n: len(set(deps)) for n, deps in edges.items()}
    dependents: Dict[Node, List[Node]] = {n: [] for n in edges}
    for node, deps in edges.items():
        for dep in set(deps):
            dependents[dep].append(node)
    ready = sorted(n for n, count in waiting.items() if count == 0)
    out: List[Node] = []
    while ready:
        node = ready.pop(0)
        out.append(node)
        for dependent in dependents[node]:
            waiting[dependent] -= 1
            if waiting[dependent] == 0:
                ready.append(dependent)
        ready.sort()
    if len(out) != len(edges):
        raise ValueError(f"the graph has a cycle: {find_cycle(edges)}")
    return out


def levels(edges: Edges) -> Dict[Node, int]:
    """Each node's level: 0 without dependencies, else one more than its
    highest dependency. A level's nodes can run together once the levels
    before it are done."""
    level: Dict[Node, int] = {}
    for node in order(edges):
        level[node] = 1 + max((level[d] for d in edges[node]), default=-1)
    return level


def dependents(edges: Edges) -> Dict[Node, List[Node]]:
    """Each node with the nodes that depend on it, sorted."""
    out: Dict[Node, List[Node]] = {n: [] for n in edges}
    for node, deps in edges.items():
        for dep in deps:
            out[dep].append(node)
    return {n: sorted(set(found)) for n, found in out.items()}


def critical_path(edges: Edges, weights: Mapping[Node, int]) -> Tuple[List[Node], int]:
    """The heaviest chain of dependencies (dependency first) and its weight,
    the sum of its nodes' `weights`: no plan of the site ends sooner. A chain
    is trimmed of nodes that weigh nothing at either end (a service with
    nothing to do before or after the work is not part of it); inside, such
    a node stays, as the link it is. ([], 0) when nothing weighs anything."""
    best: Dict[Node, Tuple[int, List[Node]]] = {}
    for node in order(edges):
        before = max((best[d] for d in sorted(edges[node])), key=lambda b: b[0], default=(0, []))
        best[node] = (before[0] + weights.get(node, 0), before[1] + [node])
    total, chain = max((best[n] for n in sorted(best)), key=lambda b: b[0], default=(0, []))
    if total <= 0:
        return [], 0
    while chain and not weights.get(chain[0], 0):
        chain = chain[1:]
    while chain and not weights.get(chain[-1], 0):
        chain = chain[:-1]
    return chain, total
