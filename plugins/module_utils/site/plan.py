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

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common import openstack_release, openstack_upgrade
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError, SiteError
from ansible_collections.lcm.openstack.plugins.module_utils.crds.service_lifecycle import ServiceLifecycle
from ansible_collections.lcm.openstack.plugins.module_utils.common.tables import aligned
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import duration
from ansible_collections.lcm.openstack.plugins.module_utils.site.chart_graph import SiteGraph
from ansible_collections.lcm.openstack.plugins.module_utils.drift.model import ReleaseDrift
from ansible_collections.lcm.openstack.plugins.module_utils.site.decide import Decision, for_deploy, for_remove, status_of, with_drift
from ansible_collections.lcm.openstack.plugins.module_utils.site.model import Dependency, Key, Service, Site, parse_site
from ansible_collections.lcm.openstack.plugins.module_utils.site.order import Order

Records = Mapping[Key, ServiceLifecycle]
ReadRecords = Callable[[List[str]], Records]
Derive = Callable[[Site], SiteGraph]
Drifts = Mapping[Key, ReleaseDrift]
ReadDrift = Callable[[Site, List[Key]], Drifts]
FLOWS = ("greenfield", "update", "reconcile", "remove", "nothing")
UPDATES = ("update", "reconcile")  # the flows the update flow runs


def site_plan(services: Sequence[Mapping[str, Any]], action: str, external: bool,
              read_records: ReadRecords, derive: Optional[Derive] = None,
              in_run: Optional[Sequence[str]] = None, read_drift: Optional[ReadDrift] = None) -> Dict[str, Any]:
    """The plan of `services` for `action`. The inventory is checked whole
    before `read_records` (namespaces -> records by (namespace, name)) is
    called: a broken inventory costs no request. `derive`, given the site,
    returns what the charts say of its order (site/chart_graph.py), once the
    records show every upgrade path supported. `read_drift`, given the site and
    the services the records leave as they are, returns how each one's release
    differs from what is asked and from its own objects (drift/assess.py)."""
    site = parse_site(services, action, external)
    records = read_records(site.namespaces) if site.services else {}
    # An unsupported jump is refused before the charts are rendered: the
    # values files of a release the site cannot go to may not even exist.
    _refuse_unsupported(site, {k: _path(site, k, _decision(site, k, records.get(k)), records.get(k))
                               for k in site.services})
    derived = derive(site) if derive is not None and site.services else None
    at_rest = [k for k in site.services if _decision(site, k, records.get(k)).flow == "nothing"]
    drifts = read_drift(site, at_rest) if read_drift is not None and at_rest and site.action != "remove" else {}
    result = plan(site, records, derived, drifts)
    for entry in result["services"]:
        entry["removed_with"] = removed_with(entry, external, in_run)
    return result


def removed_with(entry: Mapping[str, Any], external: bool, in_run: Optional[Sequence[str]]) -> List[str]:
    """The services a removal waits for, each until it is Removed: the
    dependents this run removes too (`in_run`, the services of the run; all
    of them when not given), or every dependent ('*') for a run given part of
    a site (an AWX job slice), whose other parts another run removes."""
    if entry["flow"] != "remove":
        return []
    if external:
        return ["*"]
    return [d for d in entry["dependents"] if in_run is None or d in in_run]


def plan(site: Site, records: Records, derived: Optional[SiteGraph] = None,
         drifts: Optional[Drifts] = None) -> Dict[str, Any]:
    """The module's result but `changed` (see plugins/modules/site_plan.py RETURN)."""
    order = Order.of(site, derived)
    drifts = drifts or {}
    decisions = {k: with_drift(_decision(site, k, records.get(k)), drifts.get(k), site.services[k].version)
                 for k in site.services}
    paths = {k: _path(site, k, decisions[k], records.get(k)) for k in site.services}
    _refuse_unsupported(site, paths)
    strategies = {k: _strategy(site, k, decisions[k]) for k in site.services}
    _refuse_strategies(site, strategies)
    remove = site.action == "remove"
    level = order.level
    planned = sorted(site.services, key=lambda k: (-level[k] if remove else level[k], site.name(k), k))
    entries = [_entry(site, k, order, decisions, records.get(k), paths[k], strategies[k], drifts.get(k))
               for k in planned]
    weights = {k: 0 if decisions[k].flow == "nothing" else site.services[k].expected_duration for k in site.services}
    chain, total = order.critical_path(weights)
    if remove:
        chain = chain[::-1]  # dependents are removed first
    by_level = [[site.name(k) for k in planned if level[k] == n] for n in sorted(set(level.values()), reverse=remove)]
    critical = {"services": [" & ".join(site.name(k) for k in group) for group in chain], "duration": total}
    return {"services": entries, "levels": by_level, "critical_path": critical,
            "summary": summary(site.action, entries, by_level, critical)}


def _decision(site: Site, key: Key, record: Any) -> Decision:
    if site.action == "remove":
        return for_remove(record)
    return for_deploy(record, site.services[key].version)


def _path(site: Site, key: Key, decision: Decision, record: Any) -> Optional[openstack_release.PathCheck]:
    """The upgrade path of a service the plan moves from one version to
    another; None when it is deployed anew, removed, left as it is or kept at its version."""
    current = status_of(record).get("currentVersion") or ""
    if decision.flow != "update" or not current or current == site.services[key].version:
        return None
    return openstack_release.check(current, site.services[key].version)


def _refuse_unsupported(site: Site, paths: Mapping[Key, Optional[openstack_release.PathCheck]]) -> None:
    """Every jump OpenStack does not support, named at once, before anything is read from a release."""
    refused = [f"{site.name(k)} ({k[0]}): {p.reason}" for k, p in sorted(paths.items()) if p is not None and not p.supported]
    if refused:
        raise SiteError("site plan refused, nothing changed: " + "; ".join(refused)
                        + ". Set each service's version to the next release on its path, run the site, then "
                          "the next; a service's release comes back only through playbooks/rollback.yml")


def _strategy(site: Site, key: Key, decision: Decision) -> Tuple[str, str]:
    """How an update (or a reconcile, which the update flow runs) moves the service, and why
    (common/openstack_upgrade.choose); ("", "") for any other flow, ("", the refusal) when
    its inputs cannot be run."""
    if decision.flow not in UPDATES:
        return "", ""
    svc = site.services[key]
    try:
        steps = openstack_upgrade.steps(svc.chart or svc.service, svc.upgrade_commands)
    except InputError as exc:
        return "", f"update of {site.name(key)} refused, nothing changed: {exc}"
    return openstack_upgrade.choose(svc.update_strategy, svc.service, steps)


def _refuse_strategies(site: Site, strategies: Mapping[Key, Tuple[str, str]]) -> None:
    refused = [f"{site.name(k)} ({k[0]}): {why}" for k, (chosen, why) in sorted(strategies.items()) if why and not chosen]
    if refused:
        raise SiteError("site plan refused, nothing changed: " + "; ".join(refused))


def _name(dep: Dependency, seen_from: str) -> str:
    return Dependency(dep.service, dep.namespace).text(seen_from)


def _run_version(site: Site, decisions: Mapping[Key, Decision], dep: Dependency) -> str:
    """The version this run brings a dependency to ('' when the run leaves it
    as it is): its dependent's flow waits for it there, its flow ended, not
    merely Operational at the version it ran before (a dependent is not
    drained while its dependency is upgraded). The inventory's own minimum is
    never above it: parse_site refuses that."""
    decision = decisions.get(dep.key)
    if dep.external or decision is None or decision.flow not in ("greenfield", *UPDATES):
        return ""
    if decision.kept:  # a reconcile, or an update at the version it runs: it serves on, nothing to wait for
        return ""
    return site.services[dep.key].version if dep.key in site.services else ""


def _entry(site: Site, key: Key, order: Order, decisions: Mapping[Key, Decision], record: Any,
           path: Optional[openstack_release.PathCheck], strategy: Tuple[str, str],
           drift: Optional[ReleaseDrift]) -> Dict[str, Any]:
    service: Service = site.services[key]
    decision = decisions[key]
    status = status_of(record)
    explicit = {d.key: d for d in service.depends_on}
    derived = order.derived.get(key, {})
    depends = [{"service": site.name(d.key) if not d.external else d.service, "namespace": d.namespace,
                "min_version": d.min_version, "external": d.external, "derived": d.key in derived,
                "reasons": list(derived.get(d.key, []))} for d in service.depends_on]
    depends += [{"service": site.name(k), "namespace": k[0], "min_version": "", "external": False, "derived": True,
                 "reasons": list(reasons)} for k, reasons in sorted(derived.items()) if k not in explicit]
    siblings = order.siblings(key)
    waits = [d for d in service.depends_on if d.key not in siblings]
    # The group starts together: each member waits for what any of them waits for outside it
    # (libvirt's pods wait for neutron's, which wait for keystone: libvirt starts with neutron).
    outside = sorted({k for member in [key, *siblings] for k in order.after(member) if k not in siblings | {key}})
    waits += [Dependency(k[1], k[0]) for k in outside if k not in explicit]
    wait_at = {_name(d, service.namespace): v for d, v in ((d, _run_version(site, decisions, d)) for d in waits) if v}
    provided = [{"kind": kind, "namespace": ns, "name": name, "service": by[1]}
                for (kind, ns, name), by in sorted(order.provided.get(key, {}).items()) if by in siblings]
    return {
        "service": site.name(key), "namespace": service.namespace, "release": service.release,
        "level": order.level[key], "flow": decision.flow,
        "reason": decision.reason + _path_note(path) + (f"; {strategy[0]}: {strategy[1]}" if strategy[0] else ""),
        "strategy": strategy[0],
        "release_path": None if path is None else {"checked": path.checked, "supported": path.supported,
                                                   "reason": path.reason},
        "current_version": status.get("currentVersion") or "", "target_version": service.version,
        "state": status.get("state") or "",
        "depends_on": depends, "wait_for": [d.text(service.namespace) for d in waits], "wait_at": wait_at,
        "together_with": [site.name(k) for k in sorted(siblings)], "provided": provided,
        "dependents": [site.name(k) for k in order.dependents(key)],
        "expected_duration": service.expected_duration,
        "drift": None if drift is None else drift.as_dict(),
    }


def _path_note(path: Optional[openstack_release.PathCheck]) -> str:
    if path is None or path.kind == "same":
        return ""
    return " (not an OpenStack release: path not checked)" if not path.checked else f" ({path.kind})"


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
    rows: List[Tuple[Any, ...]] = [("LEVEL", "SERVICE", "FLOW", "VERSION", "AFTER", "BESIDE", "REASON")]
    after = "dependents" if action == "remove" else "wait_for"  # a removal waits for its dependents
    rows += [(e["level"], e["service"], e["flow"], _versions(e), ",".join(_after(e, after)) or "-",
              ",".join(e["together_with"]) or "-", e["reason"]) for e in entries]
    return "\n".join([head] + (aligned(rows) if entries else []))


def _after(entry: Dict[str, Any], column: str) -> List[str]:
    """What a flow waits for, each at the version this run brings it to where it brings one."""
    at = entry.get("wait_at") or {} if column == "wait_for" else {}
    return [f"{text.split('>=')[0]}>={at[text.split('>=')[0]]}" if text.split(">=")[0] in at else text
            for text in entry[column]]


def _versions(entry: Dict[str, Any]) -> str:
    current, target = entry["current_version"], entry["target_version"]
    if entry["flow"] in ("greenfield", *UPDATES) and current and target and current != target:
        return f"{current} -> {target}"
    if entry["flow"] in ("remove", "nothing"):
        return current or "-"
    return target or current or "-"
