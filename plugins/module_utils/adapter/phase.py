# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""lcm.openstack.phase: run (state=present) or delete (state=absent) one phase."""

from __future__ import annotations

from typing import Any, Dict, List

from ansible_collections.lcm.openstack.plugins.module_utils.adapter.common import forget_secrets, mask_phase_params
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.phase_request import request_from_params
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.connection import client, reported
from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import yaml
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LcmError
from ansible_collections.lcm.openstack.plugins.module_utils.phase.runner import PhaseRunner
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import Redactor


@reported
def run_phase(module: Any) -> None:
    req = request_from_params(module.params)
    # The request holds the values; every exit from here echoes them masked.
    mask_phase_params(module.params, Redactor())
    dyn = client(module)
    runner = None
    try:
        runner = PhaseRunner(dyn, req, check_mode=module.check_mode)
        result = runner.present() if module.params["state"] == "present" else runner.absent()
    except LcmError as exc:
        forget_secrets(module, runner)
        module.fail_json(msg=str(exc), **exc.details)
    forget_secrets(module, runner)
    for warning in runner.warnings:
        module.warn(warning)
    applied = result.pop("diffs", [])
    if module._diff and applied:
        result["diff"] = diffs(applied)
    module.exit_json(**result)


def diffs(applied: List[Any]) -> List[Dict[str, str]]:
    out = []
    for a in applied:
        if a.before == a.after:
            continue
        out.append({"before_header": f"{a.key} (live)", "after_header": f"{a.key} ({a.action})",
                    "before": yaml.safe_dump(a.before, sort_keys=True) if a.before else "",
                    "after": yaml.safe_dump(a.after, sort_keys=True) if a.after else ""})
    return out
