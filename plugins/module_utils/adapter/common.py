# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the module adapters share: the connection options (kubernetes.core's,
so an AWX Kubernetes credential and K8S_AUTH_* work unchanged), the phase
source options, and how credentials are kept out of what Ansible prints."""

from __future__ import annotations

import copy
from typing import Any, Dict, List

from ansible.module_utils.basic import env_fallback
from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.kubernetes.core.plugins.module_utils.helm_args_common import HELM_AUTH_ARG_SPEC
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import MASK, Redactor


def auth_argument_spec() -> Dict[str, Any]:
    return copy.deepcopy(AUTH_ARG_SPEC)


def service_argument_spec() -> Dict[str, Any]:
    """The service a lifecycle module acts on; documented by the lcm.openstack.service doc fragment."""
    return dict(service=dict(type="str", required=True), release=dict(type="str"))


def helm_argument_spec() -> Dict[str, Any]:
    """kubernetes.core's Helm connection options, plus what every Helm module here takes."""
    spec = copy.deepcopy(HELM_AUTH_ARG_SPEC)
    spec["binary_path"].update(aliases=["helm_binary"], fallback=(env_fallback, ["HELM_BIN"]))
    spec["secret_key_pattern"] = dict(type="str", no_log=False)
    return spec


def source_options() -> Dict[str, Any]:
    """The suboptions of a phase's source (lcm.openstack.phase, and a traffic check's test phase)."""
    return dict(
        chart=dict(type="str"),
        chart_version=dict(type="str"),
        values=dict(type="dict"),
        values_files=dict(type="list", elements="path", default=[]),
        selection=dict(type="str", choices=["templates", "stage", "annotation", "manifests"]),
        templates=dict(type="list", elements="str"),
        stage_value=dict(type="str", default="lifecycle.phase"),
        manifests=dict(type="list", elements="raw"),
        values_from_release=dict(type="bool", default=False),
    )


def given(params: Dict[str, Any], *names: str) -> Dict[str, Any]:
    """The parameters among `names` that hold a value. Ansible has filled in
    the argument spec's defaults; an option without one is left out, and the
    engine's request takes its own default. No default is written twice, and
    a value given (0, '', False) is never replaced by one."""
    return {name: params[name] for name in names if params.get(name) is not None}


def forget_secrets(module: Any, runner: Any) -> None:
    """Mask every credential the engine found (in values and rendered Secrets)
    wherever Ansible prints the result, the echoed module arguments included."""
    if runner is not None:
        mask(module, runner.redactor)


def mask(module: Any, redactor: Any) -> None:
    getattr(module, "_module", module).no_log_values.update(redactor.secrets)


def warn(module: Any, warnings: List[str]) -> None:
    for warning in warnings:
        module.warn(warning)


def mask_phase_params(params: Dict[str, Any], redactor: Redactor) -> None:
    """Mask the credentials of source.values in the parameters Ansible echoes
    back (the invocation) as whole field values. No_log values reach only
    credentials distinctive enough to be masked as free text; a short real
    password (or the chart default, literally `password`) is not one."""
    source = params.get("source") or {}
    if source.get("values"):
        source["values"] = redactor.mask_values(source["values"])


def mask_release_params(params: Dict[str, Any], redactor: Redactor) -> None:
    """As mask_phase_params, for helm_release: values by their keys, every
    scalar of secret_values, and the value of a set_values entry whose key
    names a credential."""
    if params.get("values"):
        params["values"] = redactor.mask_values(params["values"])
    if params.get("secret_values"):
        params["secret_values"] = redactor.mask_values(params["secret_values"], under_secret_key=True)
    if params.get("set_values"):
        params["set_values"] = [_masked_set_value(dict(e), redactor) for e in params["set_values"]]


def _masked_set_value(entry: Dict[str, Any], redactor: Redactor) -> Dict[str, Any]:
    key, sep, _value = str(entry.get("value") or "").partition("=")
    if sep and redactor.is_secret_key(key.rsplit(".", 1)[-1]):
        entry["value"] = f"{key}={MASK}"
    return entry
