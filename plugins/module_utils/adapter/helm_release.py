# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""lcm.openstack.helm_release: bring one release to the state asked for."""

from __future__ import annotations

from typing import Any, Dict

from ansible_collections.lcm.openstack.plugins.module_utils.adapter.common import mask, mask_release_params, warn
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.connection import helm_kube_client, reported
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.helm import helm_cli
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import merge_values
from ansible_collections.lcm.openstack.plugins.module_utils.helm.release import ReleaseManager, ReleaseRequest


def release_request(params: Dict[str, Any]) -> ReleaseRequest:
    return ReleaseRequest(
        name=params["name"], namespace=params["namespace"], chart=params.get("chart"),
        chart_version=params.get("chart_version"),
        values=merge_values(params.get("values") or {}, params.get("secret_values") or {}),
        values_files=params.get("values_files") or (), set_values=params.get("set_values") or (),
        create_namespace=params.get("create_namespace", False), atomic=params.get("atomic", False),
        wait=params.get("wait", True), helm_wait=params.get("helm_wait", False),
        timeout=params.get("timeout") or 300, force=params.get("force", False),
        reset_values=params.get("reset_values", False), reuse_values=params.get("reuse_values", False),
        history_max=params.get("history_max"), description=params.get("description"),
        revision=params.get("revision"), keep_history=params.get("keep_history", False),
        server_side=params.get("server_side"), disable_jobs=params.get("disable_jobs", False),
        purge_kept=params.get("purge_kept", False))


@reported
def run_helm_release(module: Any) -> None:
    helm, redactor = helm_cli(module)
    state = module.params["state"]
    req = release_request(module.params)
    # The request holds the values; every exit from here echoes them masked.
    mask_release_params(module.params, redactor)
    # absent too: it deletes the hooks a hung uninstall left, and kept objects on a purge.
    dyn = helm_kube_client(module)
    manager = ReleaseManager(helm, req, dyn, module.check_mode)
    actions = {"present": manager.present, "absent": manager.absent,
               "rolledback": manager.rolledback, "tested": manager.tested}
    try:
        result = actions[state]()
    except PhaseError as exc:
        mask(module, redactor)
        warn(module, manager.warnings)
        details = redactor.redact_deep(dict(exc.details))
        details.setdefault("command", manager.commands[-1] if manager.commands else "")
        module.fail_json(msg=redactor.redact(str(exc)), **details)
    diff = result.pop("_diff", None)
    if module._diff and diff:
        result["diff"] = diff
    mask(module, redactor)
    warn(module, manager.warnings)
    module.exit_json(**result)
