# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A flow's end, the same whichever module ends it.

lcm.openstack.service_lifecycle ends a flow when a playbook asks it to
(flow.action=end). lcm.openstack.traffic ends it in the process of the
traffic rollout that is the flow's last step (its end_flow option): one
module run fewer per flow, each run being a process start. Either way the
end is: the record says how the flow ended and what state the service is
left in (lifecycle/runner.py), the flow's Lease is given back
(lifecycle/flow_lease.py), and the UpdateStatus is refreshed once, for the
end and for whatever the same process changed before it.

An end that finds the flow ended already, with the same result and message,
changes nothing: a re-run of a flow interrupted just after its end (or
between its last step and the end) ends it again without an error.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import flow_lease, runner
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.flow import LifecycleRequest
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.record import Lifecycle

# What a flow that reached its end without a failure leaves: the service serves.
SUCCEEDED = "Succeeded"
OPERATIONAL = "Operational"


def request(service: str, release: str, namespace: str, name: str, result: str = SUCCEEDED,
            lifecycle_state: Optional[str] = OPERATIONAL, reason: Optional[str] = None) -> LifecycleRequest:
    """The end of flow `name`, as lcm.openstack.service_lifecycle's flow.action=end asks it."""
    return LifecycleRequest(service=service, release=release, namespace=namespace, flow=name, flow_action="end",
                            result=result, lifecycle_state=lifecycle_state, message=reason or "")


def refresh(dyn: Any) -> str:
    """The UpdateStatus refreshed after the record changed ('' or a warning),
    the keeper loaded only then, as phase/record.py does: a run that changes
    nothing loads none of it."""
    from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.keeper import refresh as refreshed

    return refreshed(dyn)


def end(dyn: Any, req: LifecycleRequest, check_mode: bool, warnings: List[str],
        changed_before: bool = False) -> Dict[str, Any]:
    """End the flow `req` names; runner.run's result, with `lease` (outside
    check mode) saying what became of the flow's Lease.

    `changed_before`: the same process changed the record before (a traffic
    Phase ran) and left the UpdateStatus to this call, so that it is
    refreshed once. A refresh that failed adds a warning to `warnings`; the
    refresh is made even when the end fails, since the record did change."""
    changed = changed_before
    try:
        result = runner.run(Lifecycle(dyn, req.namespace, req.service, req.release), req, check_mode)
        changed = changed or result["changed"]
        if not check_mode:
            # Given back whatever the end changed: a re-run that ended the flow
            # already may still hold the Lease its own start took.
            lease = flow_lease.FlowLease(dyn, req.namespace, req.service, flow_lease.holder_identity())
            result["lease"] = "released" if lease.release() else "not held by this run"
    finally:
        if changed and not check_mode:
            warning = refresh(dyn)
            if warning:
                warnings.append(warning)
    return result
