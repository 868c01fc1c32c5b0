# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Ansible side of the phase modules: module parameters in, the phase
engine called once, exit_json/fail_json out. The connection comes from
kubernetes.core (its auth options and K8S_AUTH_* variables), so an AWX
Kubernetes credential works unchanged."""

from __future__ import annotations

from typing import Any, Dict, List

from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from ansible_collections.lcm.openstack.plugins.module_utils.compat import yaml
from ansible_collections.lcm.openstack.plugins.module_utils.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.spec import BLOCK_NAMES, PhaseRequest, Source


def auth_argument_spec() -> Dict[str, Any]:
    return dict(AUTH_ARG_SPEC)


def _client(module: Any) -> Any:
    try:
        return get_api_client(module=module).client
    except CoreException as exc:
        module.fail_json(msg=f"{exc}. Set kubeconfig (or K8S_AUTH_KUBECONFIG), or host and "
                             "api_key (K8S_AUTH_HOST, K8S_AUTH_API_KEY)")
    return None


def request_from_params(params: Dict[str, Any]) -> PhaseRequest:
    src = params.get("source") or {}
    return PhaseRequest(
        type=params["type"], service=params["service"], release=params.get("release") or params["service"],
        namespace=params["namespace"], name=params.get("name"),
        target_version=params.get("target_version") or "",
        source=Source(chart=src.get("chart"), chart_version=src.get("chart_version"),
                      values=src.get("values"), values_files=src.get("values_files") or (),
                      templates=src.get("templates"), selection=src.get("selection"),
                      stage_value=src.get("stage_value") or "lifecycle.phase",
                      manifests=src.get("manifests")),
        blocks={b: params.get(b) for b in BLOCK_NAMES},
        timeout=params.get("timeout") or 600, wait=params.get("wait", True),
        helm_binary=params.get("helm_binary"))


def _diffs(applied: List[Any]) -> List[Dict[str, str]]:
    out = []
    for a in applied:
        if a.before == a.after:
            continue
        out.append({"before_header": f"{a.key} (live)", "after_header": f"{a.key} ({a.action})",
                    "before": yaml.safe_dump(a.before, sort_keys=True) if a.before else "",
                    "after": yaml.safe_dump(a.after, sort_keys=True) if a.after else ""})
    return out


def _forget_secrets(module: Any, runner: Any) -> None:
    """Mask every credential the engine found (in values and rendered Secrets)
    wherever Ansible prints the result, the echoed module arguments included."""
    if runner is not None:
        getattr(module, "_module", module).no_log_values.update(runner.redactor.secrets)


def run_phase(module: Any) -> None:
    """lcm.openstack.phase: run (state=present) or delete (state=absent) one phase."""
    # Imported here: the engine needs the kubernetes library, whose absence
    # AnsibleK8SModule has already reported.
    from ansible_collections.lcm.openstack.plugins.module_utils.phase import PhaseRunner

    dyn = _client(module)
    req = request_from_params(module.params)
    runner = None
    try:
        runner = PhaseRunner(dyn, req, check_mode=module.check_mode)
        result = runner.present() if module.params["state"] == "present" else runner.absent()
    except PhaseError as exc:
        _forget_secrets(module, runner)
        module.fail_json(msg=str(exc), **exc.details)
    _forget_secrets(module, runner)
    applied = result.pop("diffs", [])
    if module._diff and applied:
        result["diff"] = _diffs(applied)
    module.exit_json(**result)


def run_phase_info(module: Any) -> None:
    """lcm.openstack.phase_info: list Phases and ServiceLifecycles."""
    from ansible_collections.lcm.openstack.plugins.module_utils.info import list_lifecycle

    dyn = _client(module)
    p = module.params
    try:
        result = list_lifecycle(dyn, p.get("namespace"), service=p.get("service"),
                                phase_type=p.get("type"), state=p.get("state"), name=p.get("name"))
    except PhaseError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=False, **result)
