# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The workloads a release's wait leaves to the test: those whose pods wait for a closed Service.

The update flow drains before it upgrades: the gate-mode drain closes each
Service it moves (its selector gets a key no pod carries), and the Service has
no endpoint until the rollout. An openstack-helm pod whose init container
waits for such a Service (`DEPENDENCY_SERVICE`: nova-conductor for nova-api,
neutron's agents for neutron-server and nova-api, cinder's scheduler for
cinder-api) cannot start before the rollout, which comes after the upgrade's
wait. Waited for there, it would hold the flow until the timeout and roll a
good upgrade back. So the wait leaves it out, says so, and the test phase,
after the rollout, waits for every workload of the release before its pods
run (model.RELEASE_WORKLOADS).
"""

from __future__ import annotations

from typing import Any, Dict, List, Sequence, Set, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common.model import TRAFFIC_GATE_LABEL
from ansible_collections.lcm.openstack.plugins.module_utils.kube.entrypoint import declared

WORKLOADS = ("Deployment", "StatefulSet", "DaemonSet")


def closed_services(dyn: Any, namespace: str) -> Set[Tuple[str, str]]:
    """(namespace, name) of the namespace's Services a drain closed; one list."""
    services = dyn.resources.get(api_version="v1", kind="Service")
    items = services.get(namespace=namespace).to_dict().get("items") or []
    return {(namespace, (s.get("metadata") or {}).get("name", "")) for s in items
            if TRAFFIC_GATE_LABEL in ((s.get("spec") or {}).get("selector") or {})}


def left_to_the_test(objects: Sequence[Dict[str, Any]], namespace: str,
                     closed: Set[Tuple[str, str]]) -> Dict[Tuple[str, str], str]:
    """(kind, name) of each workload of `objects` whose pods wait for a closed
    Service, with the line that says why."""
    out: Dict[Tuple[str, str], str] = {}
    for obj in objects:
        if obj.get("kind") not in WORKLOADS:
            continue
        waits: List[str] = [f"Service {d.namespace or namespace}/{d.name}" for d in declared(obj)
                            if d.kind == "Service" and (d.namespace or namespace, d.name) in closed]
        if waits:
            name = (obj.get("metadata") or {}).get("name", "")
            out[(str(obj["kind"]), name)] = (f"{obj['kind']} {name} waits for {', '.join(waits)}, closed by the "
                                             "drain: the test waits for it after the rollout")
    return out
