# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""lcm.openstack.service_lifecycle: the record, its state and its flow."""

from __future__ import annotations

from typing import Any, List

from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import flow, flow_run
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.common import given, warn
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.connection import client, reported
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LcmError


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
        result = flow_run.run(dyn, req, module.check_mode, warnings, bool(p.get("create_namespace")))
    except LcmError as exc:
        warn(module, warnings)
        module.fail_json(msg=str(exc))
    warn(module, warnings)
    diff = result.pop("diff")
    if module._diff:
        result["diff"] = diff
    module.exit_json(**result)
