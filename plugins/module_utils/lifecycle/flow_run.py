# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What lcm.openstack.service_lifecycle asks of a service, in one call: a
flow's end as every module ends it (flow_end.py), anything else as a flow's
start makes it (flow_start.py)."""

from __future__ import annotations

from typing import Any, Dict, List

from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import flow_end, flow_start
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.flow import LifecycleRequest


def run(dyn: Any, req: LifecycleRequest, check_mode: bool, warnings: List[str],
        create_namespace: bool = False) -> Dict[str, Any]:
    """runner.run's result with what the start or the end did besides; a
    PhaseError when it failed. Warnings that do not fail it go to `warnings`."""
    if req.flow_action == "end":  # as lcm.openstack.traffic's end_flow ends it
        return flow_end.end(dyn, req, check_mode, warnings)
    return flow_start.start(dyn, req, check_mode, warnings, create_namespace)
