# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The order of a site's flows: the inventory's `depends_on` and what the charts say.

The edges are the services' explicit `depends_on` and the dependencies their
charts' pods declare (site/chart_graph.py). Releases whose pods wait on each
other both ways form a group: their flows start together, none waits for
another's, and the init containers order their pods. Between groups the order
is kept as before: a flow starts once every service it depends on outside its
group is Operational, and a removal waits for its dependents outside it.

An explicit `depends_on` inside such a group would deadlock (the flow waits
for a service whose pods wait for its own) and is refused, naming the pods.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Set, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import SiteError
from ansible_collections.lcm.openstack.plugins.module_utils.site import graph
from ansible_collections.lcm.openstack.plugins.module_utils.site.chart_graph import SiteGraph, components
from ansible_collections.lcm.openstack.plugins.module_utils.site.model import Key, Site


@dataclass
class Order:
    """Groups, levels and dependents of a site's services."""

    group_of: Dict[Key, int]
    groups: List[List[Key]]
    group_edges: Dict[int, List[int]]
    level: Dict[Key, int]
    derived: Dict[Key, Dict[Key, List[str]]] = field(default_factory=dict)
    provided: Dict[Key, Dict[Tuple[str, str, str], Key]] = field(default_factory=dict)
    explicit: Dict[Key, List[Key]] = field(default_factory=dict)

    @classmethod
    def of(cls, site: Site, derived: Optional[SiteGraph] = None) -> "Order":
        explicit = site.edges()
        found = {k: {d: list(r) for d, r in (derived.edges.get(k) or {}).items() if d in site.services}
                 for k in site.services} if derived else {k: {} for k in site.services}
        edges = {k: sorted(set(explicit[k]) | set(found[k])) for k in site.services}
        groups = components(edges)
        group_of = {k: i for i, members in enumerate(groups) for k in members}
        _refuse_explicit_inside(site, groups, group_of, found)
        group_edges = {i: sorted({group_of[d] for k in members for d in edges[k]} - {i})
                       for i, members in enumerate(groups)}
        group_level = graph.levels(group_edges)
        level = {k: group_level[group_of[k]] for k in site.services}
        provided = {k: dict((derived.provided.get(k) or {}) if derived else {}) for k in site.services}
        return cls(group_of, groups, group_edges, level, found, provided, explicit)

    def siblings(self, key: Key) -> Set[Key]:
        """The other services of `key`'s group: deployed beside it, not before."""
        return set(self.groups[self.group_of[key]]) - {key}

    def after(self, key: Key) -> List[Key]:
        """What `key` depends on, by depends_on or by its charts."""
        return sorted(set(self.explicit.get(key, [])) | set(self.derived.get(key, {})))

    def dependents(self, key: Key) -> List[Key]:
        """The services of other groups that depend on `key`'s group."""
        mine = self.group_of[key]
        return sorted(k for k, g in self.group_of.items() if mine in self.group_edges[g])

    def critical_path(self, weights: Mapping[Key, int]) -> Tuple[List[List[Key]], int]:
        """The heaviest chain of groups; a group weighs its heaviest member (they run side by side)."""
        group_weights = {i: max((weights.get(k, 0) for k in members), default=0)
                         for i, members in enumerate(self.groups)}
        chain, total = graph.critical_path(self.group_edges, group_weights)
        return [self.groups[i] for i in chain], total


def _refuse_explicit_inside(site: Site, groups: List[List[Key]], group_of: Dict[Key, int],
                            derived: Dict[Key, Dict[Key, List[str]]]) -> None:
    """An explicit depends_on between two services whose pods wait on each other both ways."""
    for key, service in site.services.items():
        for dep in service.depends_on:
            if dep.external or dep.key not in group_of or group_of[dep.key] != group_of[key]:
                continue
            back = _path_reasons(dep.key, key, groups[group_of[key]], derived)
            raise SiteError(
                f"{site.name(key)} lists {dep.text(service.namespace)} in depends_on, but {site.name(dep.key)} "
                f"waits for {site.name(key)} through its pods ({back}): the two deploy side by side and their "
                f"init containers order the pods. Remove {dep.text(service.namespace)} from "
                f"{site.name(key)}'s depends_on")


def _path_reasons(start: Key, goal: Key, members: List[Key], derived: Dict[Key, Dict[Key, List[str]]]) -> str:
    """Why `start` waits for `goal` through the charts: the first reason of each hop."""
    previous: Dict[Key, Key] = {}
    todo, seen = [start], {start}
    while todo:
        node = todo.pop(0)
        if node == goal:
            break
        for nxt in sorted(derived.get(node, {})):
            if nxt in members and nxt not in seen:
                seen.add(nxt)
                previous[nxt] = node
                todo.append(nxt)
    hops: List[str] = []
    node = goal
    while node in previous:
        before = previous[node]
        hops.append(f"{before[1]}: {(derived[before][node] or ['its pods wait'])[0]}")
        node = before
    return "; ".join(reversed(hops)) or "through the charts"
