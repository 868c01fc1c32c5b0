# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan of a site: every service's flow, in the order the flows may run.

The plan is made before anything changes, from the inventory and the
ServiceLifecycle records alone, so that a run of the whole site can be
read, and refused, before its first flow starts: which services are new,
which are updated and from which version, which have nothing to do, and
how long the longest chain of flows that wait on each other takes.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Sequence, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common.tables import aligned
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import duration
from ansible_collections.lcm.openstack.plugins.module_utils.site import graph
from ansible_collections.lcm.openstack.plugins.module_utils.site.decide import Decision, for_deploy, for_remove, status_of
from ansible_collections.lcm.openstack.plugins.module_utils.site.model import Key, Service, Site, parse_site

Records = Mapping[Key, Dict[str, Any]]
ReadRecords = Callable[[List[str]], Records]
FLOWS = ("greenfield", "update", "remove", "nothing")


def site_plan(services: Sequence[Mapping[str, Any]], action: str, external: bool,
              read_records: ReadRecords) -> Dict[str, Any]:
    """The plan of `services` for `action`. The inventory is checked whole
    before `read_records` (namespaces -> records by (namespace, name)) is
    called: a broken inventory costs no request."""
    site = parse_site(services, action, external)
    return plan(site, read_records(site.namespaces) if site.services else {})


def plan(site: Site, records: Records) -> Dict[str, Any]:
    """The module's result but `changed` (see plugins/modules/site_plan.py RETURN)."""
    edges = site.edges()
    level, below = graph.levels(edges), graph.dependents(edges)
    decisions = {k: _decision(site, k, records.get(k)) for k in site.services}
    remove = site.action == "remove"
    planned = sorted(site.services, key=lambda k: (-level[k] if remove else level[k], site.name(k), k))
    entries = [_entry(site, k, level[k], decisions[k], records.get(k), below[k]) for k in planned]
    weights = {k: 0 if decisions[k].flow == "nothing" else site.services[k].expected_duration for k in site.services}
    chain, total = graph.critical_path(edges, weights)
    if remove:
        chain = chain[::-1]  # dependents are removed first
    by_level = [[site.name(k) for k in planned if level[k] == n] for n in sorted(set(level.values()), reverse=remove)]
    critical = {"services": [site.name(k) for k in chain], "duration": total}
    return {"services": entries, "levels": by_level, "critical_path": critical,
            "summary": summary(site.action, entries, by_level, critical)}


def _decision(site: Site, key: Key, record: Any) -> Decision:
    if site.action == "remove":
        return for_remove(record)
    return for_deploy(record, site.services[key].version)


def _entry(site: Site, key: Key, level: int, decision: Decision, record: Any, dependents: List[Key]) -> Dict[str, Any]:
    service: Service = site.services[key]
    status = status_of(record)
    return {
        "service": site.name(key), "namespace": service.namespace, "release": service.release, "level": level,
        "flow": decision.flow, "reason": decision.reason,
        "current_version": status.get("currentVersion") or "", "target_version": service.version,
        "state": status.get("state") or "",
        "depends_on": [{"service": site.name(d.key) if not d.external else d.service, "namespace": d.namespace,
                        "min_version": d.min_version, "external": d.external} for d in service.depends_on],
        "dependents": [site.name(k) for k in dependents],
        "expected_duration": service.expected_duration,
    }


def summary(action: str, entries: List[Dict[str, Any]], levels: List[List[str]], critical: Dict[str, Any]) -> str:
    """A few lines for the playbook to print: a headline, then one row a
    service in plan order (level, service, flow, versions, reason)."""
    counts = {flow: sum(1 for e in entries if e["flow"] == flow) for flow in FLOWS}
    flows = ", ".join(f"{flow} {n}" for flow, n in counts.items() if n)
    path = " -> ".join(critical["services"])
    head = (f"site plan ({action}): {len(entries)} service(s) in {len(levels)} level(s)"
            + (f"; {flows}" if flows else "")
            + (f"; critical path {path} ({duration(critical['duration'])})" if path else "")
            + ("" if any(counts[f] for f in FLOWS if f != "nothing") else "; nothing to do"))
    rows: List[Tuple[Any, ...]] = [("LEVEL", "SERVICE", "FLOW", "VERSION", "REASON")]
    rows += [(e["level"], e["service"], e["flow"], _versions(e), e["reason"]) for e in entries]
    return "\n".join([head] + (aligned(rows) if entries else []))


def _versions(entry: Dict[str, Any]) -> str:
    current, target = entry["current_version"], entry["target_version"]
    if entry["flow"] in ("greenfield", "update") and current and target and current != target:
        return f"{current} -> {target}"
    if entry["flow"] in ("remove", "nothing"):
        return current or "-"
    return target or current or "-"
