# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What lcm.openstack.service_lifecycle does: the record brought to what the
request asks (dependsOn, a state, a flow's start or end), a flow's start
first waiting for the services it depends on (dependency_wait.py).

Apart from the flow record (flow.py), whose report and summary the info
modules read, so that they do not ship the wait.
"""

from __future__ import annotations

import copy
import time
from dataclasses import replace
from typing import Any, Dict, List, Mapping, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.crds.service_lifecycle import LifecycleStatus, lifecycle_flow, lifecycle_spec, lifecycle_status
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import now_text as now, parse_time
from ansible_collections.lcm.openstack.plugins.module_utils.common.versions import compare
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LifecycleError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import api_call
from ansible_collections.lcm.openstack.plugins.module_utils.kube import paging
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.dependencies import (
    REMOVED, Dependency, dependents_of, parse_all,
)
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.dependency_wait import CONDITION, Waited, settle
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.flow import LifecycleRequest, end, report, start, summary
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import site_member
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.record import Lifecycle, set_condition
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.site_member import SiteMember


def run(lifecycle: Lifecycle, req: LifecycleRequest, check_mode: bool = False) -> Dict[str, Any]:
    """Bring the record to what the request asks; return changed and the record.
    In check mode nothing is written and changed says whether it would be."""
    req.validate()
    if req.depends_on is not None:  # a malformed element is refused before the record keeps it
        parse_all(req.depends_on, req.namespace, req.service)
    site = SiteMember.given(req.site)
    changed = False
    existing = lifecycle.get()
    if existing is None or site_member.differs(existing, site) or (
            req.depends_on is not None
            and list(lifecycle_spec(existing).get("dependsOn") or []) != list(req.depends_on)):
        if not check_mode:
            lifecycle.ensure(depends_on=req.depends_on, site=site)
        changed = True
    waited = dependencies_met(lifecycle, req, check_mode) \
        if req.flow_action == "start" and req.require_dependencies else None
    at = now()

    def change(status: LifecycleStatus) -> None:
        if req.flow_action == "start":
            start(status, req, at)
            _ready(status, req, waited, at)
            if req.took_over:  # the record says so, not only the Lease: kubectl get slc shows it
                set_condition(status, LEASE_TAKEN_OVER, True, "TakenOver", req.took_over, at)
        elif req.flow_action == "end":
            end(status, req, at, strict=not check_mode)
        if req.lifecycle_state:
            status["state"] = req.lifecycle_state
    if req.flow_action or req.lifecycle_state:
        changed = lifecycle.update(change, dry_run=check_mode) or changed
    record = lifecycle.get() or {}
    if check_mode:  # what the record would become
        record = copy.deepcopy(record or {"metadata": {"name": req.service, "namespace": req.namespace},
                                          "spec": {"service": req.service, "release": req.release}})
        record.setdefault("status", {})
        change(record["status"])
    before, after = summary(existing), summary(record)
    out = {"changed": changed, "lifecycle": after, "report": report(record) if record else "",
           "diff": {"before": _without_phases(before), "after": _without_phases(after)}}
    if waited is not None:
        out.update(waited=waited.seconds, waited_for=waited.waited_for)
    return out


LEASE_TAKEN_OVER = "FlowLeaseTakenOver"


def dependencies_met(lifecycle: Lifecycle, req: LifecycleRequest, check_mode: bool = False) -> Waited:
    """Wait until the services the record depends on are met (for a removal:
    until the services that depend on it are Removed); what it waits for is
    written to the record's DependenciesReady condition."""
    if req.flow == "remove":
        deps = removal_order(lifecycle, req)
    else:
        texts = req.depends_on if req.depends_on is not None else \
            lifecycle_spec(lifecycle.get()).get("dependsOn") or []
        deps = at_run_versions(parse_all(texts, req.namespace, req.service), (req.site or {}).get("dependency_versions"))

    from ansible_collections.lcm.openstack.plugins.module_utils.progress.lines import for_run  # pylint: disable=import-outside-toplevel
    lines = for_run(f"{req.service} {req.flow or 'flow'}", deadline=time.monotonic() + req.dependency_timeout)

    def tell(reason: str, message: str) -> None:
        lifecycle.update(lambda status: set_condition(status, CONDITION, False, reason, message, now()))
        lines.say(message + lines.left())
    return settle(lifecycle.dyn, lifecycle.res, req.service, deps,
                  req.dependency_timeout, parse_time(req.dependencies_since), tell, check_mode)


def at_run_versions(deps: List[Dependency], versions: Optional[Mapping[str, str]]) -> List[Dependency]:
    """Each dependency at the version a site run brings it to, where it brings
    one (`site.dependency_versions`, keyed as depends_on names it): waited for
    there, its flow ended. Only this start waits so; the record keeps the
    dependencies as declared, so a later flow (a rollback) does not wait for
    versions of a run that is over."""
    if not versions:
        return deps
    return [replace(d, minimum=str(versions[d.label])) if d.label in versions and
            (not d.minimum or compare(str(versions[d.label]), d.minimum) > 0) else d for d in deps]


def removal_order(lifecycle: Lifecycle, req: LifecycleRequest) -> List[Dependency]:
    """A service is not removed while a service that depends on it is
    Operational (or has a flow running): refused at once, naming them, unless
    the same run removes them too (`removed_with`, a site's removal), which
    is then waited for. Dependents are read in the service's namespace."""
    with api_call("list", "servicelifecycles", lifecycle.namespace):
        records = paging.read(lifecycle.res, lifecycle.namespace, None, lambda item: item)
    dependents = [r for r in dependents_of(records, req.service, req.namespace)
                  if lifecycle_status(r).get("state") != REMOVED]
    every = "*" in req.removed_with  # a slice of a site's removal: the other slices remove the rest
    blocking = [r for r in dependents if not every and r["metadata"]["name"] not in req.removed_with and (
        lifecycle_status(r).get("state") == "Operational"
        or lifecycle_flow(r).get("state") == "Running")]
    if blocking:
        named = ", ".join(f"{r['metadata']['name']} ({lifecycle_status(r).get('state') or 'no state'})"
                          for r in blocking)
        raise LifecycleError(f"{req.service} is depended on by {named}: remove them first, or remove the whole site "
                             "(playbooks/site_remove.yml), or set require_dependencies=false")
    return [Dependency(r["metadata"]["name"], req.namespace, label=r["metadata"]["name"], want=REMOVED)
            for r in dependents if every or r["metadata"]["name"] in req.removed_with]


def _ready(status: LifecycleStatus, req: LifecycleRequest, waited: Optional[Waited], at: str) -> None:
    """DependenciesReady True once met, in the start's own write: when this
    start waited, or an earlier one left the condition False."""
    if waited is None:
        return
    if req.dependency_timeout > 0 or any(c.get("type") == CONDITION for c in status.get("conditions") or []):
        set_condition(status, CONDITION, True, "Met", waited.message, at)


def _without_phases(summary_: Dict[str, Any]) -> Dict[str, Any]:
    out = dict(summary_)
    if out.get("flow"):
        out["flow"] = {k: v for k, v in out["flow"].items() if k != "phases"}
    return out
