# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What lcm.openstack.service_lifecycle asks of a service, in one call
(run): a flow's end as every module ends it (flow_end.py), anything else as
a flow's start makes it (start, here: the counterpart of the end).

The namespace is made first when asked (kube/namespace_ensure.py): the Lease
lives in it. The flow's Lease (flow_lease.py) is taken before the record is
touched, so a refused flow changes nothing; then the record says the flow
started, once the services it depends on are met (runner.py). The renewer
(lease_renewer.py) is left behind before that wait when it may outlast the
Lease, otherwise once the start is recorded. A start that fails gives the
Lease back. The UpdateStatus is refreshed after any change to the record.
A request with no flow action (the dependencies or the state set) takes the
same path without namespace or Lease; check mode takes no Lease.
"""

from __future__ import annotations

from typing import Any, Dict, List

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LcmError
from ansible_collections.lcm.openstack.plugins.module_utils.kube import namespace_ensure
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import flow_end, flow_lease, lease_renewer, runner
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.flow import LifecycleRequest
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.flow_end import refresh
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.record import Lifecycle


def run(dyn: Any, req: LifecycleRequest, check_mode: bool, warnings: List[str],
        create_namespace: bool = False) -> Dict[str, Any]:
    """runner.run's result with what the start or the end did besides; a
    LcmError when it failed. Warnings that do not fail it go to `warnings`.
    One module for both, so that the service_lifecycle module loads no more
    Python modules than kubernetes.core.k8s (tests/unit/plugins/modules/test_payloads.py)."""
    if req.flow_action == "end":  # as lcm.openstack.traffic's end_flow ends it
        return flow_end.end(dyn, req, check_mode, warnings)
    return start(dyn, req, check_mode, warnings, create_namespace)


def start(dyn: Any, req: LifecycleRequest, check_mode: bool, warnings: List[str],
          create_namespace: bool = False) -> Dict[str, Any]:
    """Start the flow `req` names (or set what it asks of the record); runner.run's
    result, with `lease` and `namespace` saying what the start took and made.
    A refresh that failed adds a warning to `warnings`."""
    starting = req.flow_action == "start"
    lease = None if check_mode or not starting else \
        flow_lease.FlowLease(dyn, req.namespace, req.service, flow_lease.holder_identity())
    made = None
    # Before the Lease, which lives in the namespace.
    if create_namespace and starting:
        made = namespace_ensure.ensure(dyn, req.namespace, check_mode)
    taken = lease.acquire(req.flow or "") if lease else None
    # A wait for the dependencies may outlast the Lease's 60 s: renewed from the start.
    renewing = bool(taken) and req.require_dependencies and req.dependency_timeout > 0
    if renewing:
        lease_renewer.keep_renewed(dyn, lease)
    if taken and taken.action == "took-over":
        req.took_over = taken.message
    try:
        result = runner.run(Lifecycle(dyn, req.namespace, req.service, req.release), req, check_mode)
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
    if result["changed"] and not check_mode:
        # The UpdateStatus follows the record, as after a phase (phase/record.py)
        # and a flow's end (flow_end.py): a flow's start, a service Removed or
        # Failed show at once.
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
