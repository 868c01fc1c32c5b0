# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The site's ServiceLifecycle records, read in as few requests as the credentials allow.

A GET a service would cost a site of 30 services 30 requests; one list per
namespace costs one each, and one cluster-wide list one in all. So a site in
one namespace lists it; a site across namespaces lists cluster-wide, keeping
its namespaces, and namespace by namespace where that is denied (a runner
bound in its own namespaces, docs/rbac.md). Lists are read in pages
(kube/paging.py). A namespace that is denied too fails the plan: a plan that
has not read a service's record would deploy it anew.

No ServiceLifecycle CRD means no service was ever deployed by a flow: every
record is missing, and the plan says so rather than fail.
"""

from __future__ import annotations

from typing import Any, Dict, List, Sequence, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.crds.service_lifecycle import ServiceLifecycle, lifecycle_spec, lifecycle_status
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import CrdMissing
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import api_call
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import LIFECYCLE_KIND
from ansible_collections.lcm.openstack.plugins.module_utils.kube.crd import lcm_resource
from ansible_collections.lcm.openstack.plugins.module_utils.kube.across import across
from ansible_collections.lcm.openstack.plugins.module_utils.kube.paging import Item, read

Key = Tuple[str, str]  # (namespace, service): a record is named after its service
_FLOW_KEYS = ("name", "state", "startedAt", "completedAt", "targetVersion")


def read_records(dyn: Any, namespaces: Sequence[str]) -> Dict[Key, ServiceLifecycle]:
    """The ServiceLifecycle records in `namespaces`, by (namespace, name)."""
    wanted = sorted(set(namespaces))
    if not wanted:
        return {}
    try:
        items = _listed(lcm_resource(dyn, LIFECYCLE_KIND), wanted)
    except CrdMissing:
        return {}
    return {(i["metadata"].get("namespace") or "", i["metadata"]["name"]): i for i in items}


def _listed(res: Any, namespaces: List[str]) -> List[Item]:
    if len(namespaces) == 1:
        return _in(res, namespaces[0])
    return across(res, namespaces, None, _kept, set(), strict=True)


def _in(res: Any, namespace: str) -> List[Item]:
    with api_call("list", res.name, namespace):
        return read(res, namespace, None, _kept)


def _kept(item: ServiceLifecycle) -> ServiceLifecycle:
    """What the flow decision reads of a record; its history is dropped with its page."""
    meta, status = item.get("metadata") or {}, lifecycle_status(item)
    flow = status.get("flow") or {}
    kept_status = {k: status[k] for k in ("state", "currentVersion") if k in status}
    if flow:
        kept_status["flow"] = {k: flow[k] for k in _FLOW_KEYS if k in flow}
    return {"metadata": {"name": meta.get("name"), "namespace": meta.get("namespace")},
            "spec": lifecycle_spec(item), "status": kept_status}
