# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read Phases and ServiceLifecycles back, filtered, as snake_case lists."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.crds.phase import phase_status
from ansible_collections.lcm.openstack.plugins.module_utils.crds.service_lifecycle import ServiceLifecycle, lifecycle_status
from ansible_collections.lcm.openstack.plugins.module_utils.kube.crd import lcm_resource
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import api_call
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import started_order
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.flow import report as flow_report, summary as flow_summary
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import (
    LABEL_SERVICE, LABEL_TYPE, LIFECYCLE_KIND, PHASE_KIND,
)
from ansible_collections.lcm.openstack.plugins.module_utils.common.phase_view import describe_phase


def lifecycle_summary(slc: ServiceLifecycle) -> Dict[str, Any]:
    """A ServiceLifecycle with its whole history (flow.summary, plus history)."""
    status = lifecycle_status(slc)
    out = flow_summary(slc)
    out.update(
        state=status.get("state"), current_version=status.get("currentVersion"),
        target_version=status.get("targetVersion"), current_phase=status.get("currentPhase") or None,
        history=[{"name": h.get("name"), "type": h.get("type"), "result": h.get("result"),
                  "started_at": h.get("startedAt"), "completed_at": h.get("completedAt"),
                  "message": h.get("message", "")} for h in status.get("history") or []],
        report=flow_report(slc))
    return out


def _list(dyn: Any, kind: str, namespace: Optional[str], selector: str) -> List[Dict[str, Any]]:
    res = lcm_resource(dyn, kind)
    with api_call("list", res.name, namespace):
        items = res.get(namespace=namespace, label_selector=selector or None).to_dict()
    return items.get("items") or []


def list_lifecycle(dyn: Any, namespace: Optional[str], service: Optional[str] = None,
                   phase_type: Optional[str] = None, state: Optional[str] = None,
                   name: Optional[str] = None) -> Dict[str, List[Dict[str, Any]]]:
    """Phases (oldest first) and ServiceLifecycles that match every filter given."""
    selector = ",".join(s for s in (f"{LABEL_SERVICE}={service}" if service else "",
                                    f"{LABEL_TYPE}={phase_type}" if phase_type else "") if s)
    phases = [describe_phase(p) for p in sorted(_list(dyn, PHASE_KIND, namespace, selector), key=started_order)
              if (not name or p["metadata"]["name"] == name)
              and (not state or phase_status(p).get("state", "Pending") == state)]
    slc_selector = f"{LABEL_SERVICE}={service}" if service else ""
    lifecycles = [lifecycle_summary(s) for s in _list(dyn, LIFECYCLE_KIND, namespace, slc_selector)]
    return {"phases": phases, "lifecycles": lifecycles}
