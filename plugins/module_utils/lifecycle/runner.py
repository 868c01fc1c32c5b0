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
from typing import Any, Dict, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import now_text as now, parse_time
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.dependencies import parse_all
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.dependency_wait import CONDITION, Waited, settle
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.flow import LifecycleRequest, end, report, start, summary
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.record import Lifecycle, set_condition


def run(lifecycle: Lifecycle, req: LifecycleRequest, check_mode: bool = False) -> Dict[str, Any]:
    """Bring the record to what the request asks; return changed and the record.
    In check mode nothing is written and changed says whether it would be."""
    req.validate()
    if req.depends_on is not None:  # a malformed element is refused before the record keeps it
        parse_all(req.depends_on, req.namespace, req.service)
    changed = False
    existing = lifecycle.get()
    if existing is None or (req.depends_on is not None
                            and list((existing.get("spec") or {}).get("dependsOn") or []) != list(req.depends_on)):
        if not check_mode:
            lifecycle.ensure(depends_on=req.depends_on)
        changed = True
    waited = dependencies_met(lifecycle, req, check_mode) \
        if req.flow_action == "start" and req.require_dependencies else None
    at = now()

    def change(status: Dict[str, Any]) -> None:
        if req.flow_action == "start":
            start(status, req, at)
            _ready(status, req, waited, at)
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


def dependencies_met(lifecycle: Lifecycle, req: LifecycleRequest, check_mode: bool = False) -> Waited:
    """Wait until the services the record depends on are met; what it waits
    for is written to the record's DependenciesReady condition."""
    texts = req.depends_on if req.depends_on is not None else \
        ((lifecycle.get() or {}).get("spec") or {}).get("dependsOn") or []

    def tell(reason: str, message: str) -> None:
        lifecycle.update(lambda status: set_condition(status, CONDITION, False, reason, message, now()))
    return settle(lifecycle.dyn, lifecycle.res, req.service, parse_all(texts, req.namespace, req.service),
                  req.dependency_timeout, parse_time(req.dependencies_since), tell, check_mode)


def _ready(status: Dict[str, Any], req: LifecycleRequest, waited: Optional[Waited], at: str) -> None:
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
