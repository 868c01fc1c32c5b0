# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""lcm.openstack.site_plan: the plan of a whole site, nothing changed."""

from __future__ import annotations

from typing import Any, Dict, List

from ansible_collections.lcm.openstack.plugins.module_utils.adapter.connection import client, reported
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.site.model import planned_keys
from ansible_collections.lcm.openstack.plugins.module_utils.site.plan import site_plan
from ansible_collections.lcm.openstack.plugins.module_utils.site.records import Key, read_records


@reported
def run_site_plan(module: Any) -> None:
    p = module.params
    # Only the keys the plan reads are echoed back: a host's values hold passwords.
    p["services"] = [planned_keys(s) for s in p.get("services") or []]

    def records(namespaces: List[str]) -> Dict[Key, Dict[str, Any]]:
        # Connected only once the inventory is known good: a broken one costs no request.
        return read_records(client(module), namespaces)
    try:
        result = site_plan(p["services"], p["action"], p["external"], records)
    except PhaseError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=False, **result)
