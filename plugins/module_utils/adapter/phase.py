# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""lcm.openstack.phase: run (state=present) or delete (state=absent) one phase."""

from __future__ import annotations

from typing import Any, Dict, List

from ansible_collections.lcm.openstack.plugins.module_utils.adapter.common import forget_secrets, given, mask_phase_params
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.connection import client, reported
from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import yaml
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.phase.runner import PhaseRunner
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import Redactor
from ansible_collections.lcm.openstack.plugins.module_utils.phase.spec import BLOCK_NAMES, PhaseRequest, Source


def request_from_params(params: Dict[str, Any]) -> PhaseRequest:
    src = params.get("source") or {}
    return PhaseRequest(
        type=params["type"], service=params["service"], release=params.get("release") or params["service"],
        namespace=params["namespace"],
        source=Source(**given(src, "chart", "chart_version", "values", "values_files", "templates", "selection",
                              "stage_value", "manifests", "values_from_release")),
        blocks={b: params.get(b) for b in BLOCK_NAMES}, helm_binary=params.get("binary_path"),
        **given(params, "name", "target_version", "release_revision", "timeout", "wait"))


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
    except PhaseError as exc:
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
