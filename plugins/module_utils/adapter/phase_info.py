# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""lcm.openstack.phase_info: list Phases and ServiceLifecycles."""

from __future__ import annotations

from typing import Any

from ansible_collections.lcm.openstack.plugins.module_utils.adapter.connection import client, reported
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LcmError
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.info import list_lifecycle


@reported
def run_phase_info(module: Any) -> None:
    dyn = client(module)
    p = module.params
    try:
        result = list_lifecycle(dyn, p.get("namespace"), service=p.get("service"),
                                phase_type=p.get("type"), state=p.get("state"), name=p.get("name"))
    except LcmError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=False, **result)
