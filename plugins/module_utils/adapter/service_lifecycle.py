# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""lcm.openstack.service_lifecycle: the record, its state and its flow."""

from __future__ import annotations

from typing import Any, Dict, List

from ansible_collections.lcm.openstack.plugins.module_utils.kube import lease_renewer, namespace_ensure
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import flow, flow_end, flow_lease, runner
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.common import given, warn
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.connection import client, reported
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LcmError
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.record import Lifecycle
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.keeper import refresh


@reported
def run_service_lifecycle(module: Any) -> None:
    dyn = client(module)
    p = module.params
    f = p.get("flow") or {}
    req = flow.LifecycleRequest(
        service=p["service"], release=p.get("release") or p["service"], namespace=p["namespace"],
        flow=f.get("name"), flow_action=f.get("action"), message=p.get("reason") or "",
        **given(p, "depends_on", "lifecycle_state", "require_dependencies", "dependency_timeout",
                "dependencies_since", "site", "removed_with"),
        **given(f, "planned", "target_version", "from_revision", "result", "traffic_skipped"))
    warnings: List[str] = []
    try:
        if req.flow_action == "end":  # as lcm.openstack.traffic's end_flow ends it
            result = flow_end.end(dyn, req, module.check_mode, warnings)
        else:
            result = _start_or_set(module, dyn, req, warnings)
    except LcmError as exc:
        warn(module, warnings)
        module.fail_json(msg=str(exc))
    warn(module, warnings)
    diff = result.pop("diff")
    if module._diff:
        result["diff"] = diff
    module.exit_json(**result)


def _start_or_set(module: Any, dyn: Any, req: flow.LifecycleRequest, warnings: List[str]) -> Dict[str, Any]:
    """A flow's start (its Lease taken first), or the record's dependencies or state set."""
    p = module.params
    lease = None if module.check_mode or req.flow_action != "start" else \
        flow_lease.FlowLease(dyn, req.namespace, req.service, flow_lease.holder_identity())
    made = None
    # Before the Lease, which lives in the namespace.
    if p.get("create_namespace") and req.flow_action == "start":
        made = namespace_ensure.ensure(dyn, req.namespace, module.check_mode)
    taken = lease.acquire(req.flow or "") if lease else None
    # A wait for the dependencies may outlast the Lease's 60 s: renewed from the start.
    renewing = bool(taken) and req.require_dependencies and req.dependency_timeout > 0
    if renewing:
        lease_renewer.keep_renewed(dyn, lease)
    if taken and taken.action == "took-over":
        req.took_over = taken.message
    try:
        result = runner.run(Lifecycle(dyn, req.namespace, req.service, req.release), req, module.check_mode)
    except LcmError:
        if taken:  # the flow did not start: nothing holds the service
            _give_back(lease)
        raise
    if taken:
        result["lease"] = taken.message
        if not renewing:
            lease_renewer.keep_renewed(dyn, lease)
    if made is not None:
        result["namespace"] = made
        result["changed"] = result["changed"] or made == namespace_ensure.CREATED
    if result["changed"] and not module.check_mode:
        # The UpdateStatus follows the record, as after a phase (phase/record.py)
        # and a flow's end (lifecycle/flow_end.py): a flow's start, a service
        # Removed or Failed show at once.
        warning = refresh(dyn)
        if warning:
            warnings.append(warning)
    return result


def _give_back(lease: Any) -> None:
    """Release the Lease of a flow that did not start. A renewer left running
    (a dependency wait) may write it at the same moment: try once more; its
    next renewal then finds the Lease given back and ends."""
    try:
        lease.release()
    except LcmError:
        lease.release()
