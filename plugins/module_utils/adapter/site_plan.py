# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""lcm.openstack.site_plan: the plan of a whole site, nothing changed."""

from __future__ import annotations

import os
from typing import Any, Dict, List

from ansible_collections.lcm.openstack.plugins.module_utils.adapter.connection import client, reported
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LcmError
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import Redactor
from ansible_collections.lcm.openstack.plugins.module_utils.crds.service_lifecycle import ServiceLifecycle
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm, find_helm
from ansible_collections.lcm.openstack.plugins.module_utils.site.chart_graph import SiteGraph, derive
from ansible_collections.lcm.openstack.plugins.module_utils.site.model import Site, planned_keys
from ansible_collections.lcm.openstack.plugins.module_utils.site.plan import site_plan
from ansible_collections.lcm.openstack.plugins.module_utils.site.records import Key, read_records
from ansible_collections.lcm.openstack.plugins.module_utils.site.renders import ChartInput, render_all


@reported
def run_site_plan(module: Any) -> None:
    p = module.params
    given = list(p.get("services") or [])
    redactor = Redactor()
    for raw in given:
        if isinstance(raw, dict):
            redactor.add_values(raw.get("values") or {})
    # Only the keys the plan reads are echoed back: a host's values hold passwords.
    p["services"] = [planned_keys(s) for s in given]
    connected: List[Any] = []

    def dyn() -> Any:
        if not connected:
            connected.append(client(module))
        return connected[0]

    def records(namespaces: List[str]) -> Dict[Key, ServiceLifecycle]:
        # Connected only once the inventory is known good: a broken one costs no request.
        return read_records(dyn(), namespaces)

    def from_charts(site: Site) -> SiteGraph:
        charts = {}
        for raw in given:
            key = (planned_keys(raw).get("namespace") or "openstack", raw.get("service"))
            service = site.services.get(key)
            chart = ChartInput.of(raw, service.release) if service else None
            if chart is not None:
                charts[key] = chart
        if not charts:
            return SiteGraph()
        # `helm template` renders on the client: no connection settings for Helm.
        helm = Helm(find_helm(p.get("binary_path"), os.environ), redactor=redactor)
        renders = render_all(helm, charts)
        from ansible_collections.lcm.openstack.plugins.module_utils.phase.waves import cluster_lookup
        return derive(renders, cluster_lookup(dyn()), external=p["external"])
    try:
        result = site_plan(p["services"], p["action"], p["external"], records,
                           from_charts if p.get("from_charts", True) else None, p.get("in_run"))
    except LcmError as exc:
        module.fail_json(msg=redactor.redact(str(exc)))
    module.exit_json(changed=False, **result)
