# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""lcm.openstack.helm_release: bring one release to the state asked for."""

from __future__ import annotations

import functools
from typing import Any, Dict, List, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.adapter.common import given, mask, mask_release_params, warn
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.connection import helm_kube_client, reported
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.helm import helm_cli
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LcmError
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import merge_values
from ansible_collections.lcm.openstack.plugins.module_utils.helm.release import ReleaseManager, ReleaseRequest


def release_request(params: Dict[str, Any]) -> ReleaseRequest:
    return ReleaseRequest(
        name=params["name"], namespace=params["namespace"],
        values=merge_values(params.get("values") or {}, params.get("secret_values") or {}),
        **given(params, "chart", "chart_version", "values_files", "set_values", "create_namespace", "atomic",
                "wait", "helm_wait", "timeout", "force", "reset_values", "reuse_values", "history_max",
                "description", "revision", "keep_history", "server_side", "disable_jobs", "purge_kept",
                "drift", "drift_ignore"))


def read_drift(dyn: Any, namespace: str, manifest: str, ignore: List[str]) -> Tuple[List[Any], str]:
    """The release's objects that drifted from `manifest` (drift/live.py), loaded only when asked."""
    from ansible_collections.lcm.openstack.plugins.module_utils.drift import fields, live  # pylint: disable=import-outside-toplevel
    found, skipped = live.drifted(dyn, {"release": live.Release(namespace, manifest, fields.parse_rules(ignore))})
    return found["release"], skipped.get("release", "")


@reported
def run_helm_release(module: Any) -> None:
    helm, redactor = helm_cli(module)
    state = module.params["state"]
    req = release_request(module.params)
    # The request holds the values; every exit from here echoes them masked.
    mask_release_params(module.params, redactor)
    # Connected when first needed (the Lease, the wait, the hooks a hung
    # uninstall left, kept objects on a purge): a release found as asked needs
    # no client, and its import is most of such a run (common/compat.py).
    manager = ReleaseManager(helm, req, check_mode=module.check_mode, connect=functools.partial(helm_kube_client, module),
                             read_drift=read_drift)
    actions = {"present": manager.present, "absent": manager.absent,
               "rolledback": manager.rolledback, "tested": manager.tested}
    try:
        result = actions[state]()
    except LcmError as exc:
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
