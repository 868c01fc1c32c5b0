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
from ansible_collections.lcm.openstack.plugins.module_utils.drift.assess import asked_of, assess as assess_releases
from ansible_collections.lcm.openstack.plugins.module_utils.drift.diff import release_diff
from ansible_collections.lcm.openstack.plugins.module_utils.drift.model import ReleaseDrift
from ansible_collections.lcm.openstack.plugins.module_utils.helm import storage
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
    seen: Dict[Key, ReleaseDrift] = {}

    def releases(site: Site, keys: List[Key]) -> Dict[Key, ReleaseDrift]:
        asks = {}
        for raw in given:
            key = (planned_keys(raw).get("namespace") or "openstack", raw.get("service"))
            if key in keys:
                asks[key] = asked_of(raw, key[0], site.services[key].release, site.name(key))
        of = storage.kind(os.environ)
        if of is None:  # HELM_DRIVER=sql: only Helm reaches the records
            unread = "HELM_DRIVER=sql keeps the release records where only Helm reads them"
            return {k: ReleaseDrift(policy=a.policy, unread=unread) for k, a in asks.items()}
        found = assess_releases(dyn(), asks, of)
        seen.update(found)
        return found
    try:
        result = site_plan(p["services"], p["action"], p["external"], records,
                           from_charts if p.get("from_charts", True) else None, p.get("in_run"),
                           releases if p.get("read_releases", True) else None)
    except LcmError as exc:
        module.fail_json(msg=redactor.redact(str(exc)))
    if module._diff:  # pylint: disable=protected-access
        drifted = [(e["service"], seen[(e["namespace"], e["service"].rsplit("/", 1)[-1])]) for e in result["services"]
                   if (e["namespace"], e["service"].rsplit("/", 1)[-1]) in seen]
        result["diff"] = [release_diff(name, d, redactor) for name, d in drifted if d.asked or d.live]
    # In check mode, a plan with flows to run is what the run would change.
    changed = module.check_mode and any(e["flow"] != "nothing" for e in result["services"])
    module.exit_json(changed=changed, **redactor.redact_deep(result))
