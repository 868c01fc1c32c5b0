# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""lcm.openstack.update_status: compute the UpdateStatus singleton, write it if it changed."""

from __future__ import annotations

from typing import Any

from ansible_collections.lcm.openstack.plugins.module_utils.adapter.connection import client, reported
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LcmError
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus import drift_read
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights import Settings
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.keeper import StatusKeeper


@reported
def run_update_status(module: Any) -> None:
    dyn = client(module)
    p = module.params
    settings = Settings(pod_unready_minutes=p["pod_unready_minutes"], job_expected_seconds=p["job_expected_seconds"],
                        stall_margin_seconds=p["stall_margin_seconds"])
    try:
        keeper = StatusKeeper(dyn, settings, module.check_mode, drift=drift_read.read)
        result = keeper.run(p["details"])
    except LcmError as exc:
        module.fail_json(msg=str(exc))
    if keeper.warning:
        module.warn(keeper.warning)
    module.exit_json(changed=result["changed"], update_status=result["status"], report=result["report"],
                     report_lines=result["report"].splitlines())
