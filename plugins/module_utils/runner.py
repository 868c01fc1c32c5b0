# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Ansible side of the phase modules: module parameters in, the phase
engine called once, exit_json/fail_json out. The connection comes from
kubernetes.core (its auth options and K8S_AUTH_* variables), so an AWX
Kubernetes credential works unchanged."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.lcm.openstack.plugins.module_utils.connection import _client, _helm_kube_client, reported
from ansible_collections.lcm.openstack.plugins.module_utils.compat import yaml
from ansible_collections.lcm.openstack.plugins.module_utils.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.redact import MASK, Redactor
from ansible_collections.lcm.openstack.plugins.module_utils.spec import BLOCK_NAMES, PhaseRequest, Source


def auth_argument_spec() -> Dict[str, Any]:
    return dict(AUTH_ARG_SPEC)


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
                      manifests=src.get("manifests"),
                      values_from_release=bool(src.get("values_from_release"))),
        release_revision=params.get("release_revision"),
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
        _mask(module, runner.redactor)


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


@reported
def run_phase(module: Any) -> None:
    """lcm.openstack.phase: run (state=present) or delete (state=absent) one phase."""
    # Imported here: the engine needs the kubernetes library, whose absence
    # AnsibleK8SModule has already reported.
    from ansible_collections.lcm.openstack.plugins.module_utils.phase import PhaseRunner

    req = request_from_params(module.params)
    # The request holds the values; every exit from here echoes them masked.
    mask_phase_params(module.params, Redactor())
    dyn = _client(module)
    runner = None
    try:
        runner = PhaseRunner(dyn, req, check_mode=module.check_mode)
        result = runner.present() if module.params["state"] == "present" else runner.absent()
    except PhaseError as exc:
        _forget_secrets(module, runner)
        module.fail_json(msg=str(exc), **exc.details)
    _forget_secrets(module, runner)
    for warning in runner.warnings:
        module.warn(warning)
    applied = result.pop("diffs", [])
    if module._diff and applied:
        result["diff"] = _diffs(applied)
    module.exit_json(**result)


@reported
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


@reported
def run_service_lifecycle(module: Any) -> None:
    """lcm.openstack.service_lifecycle: the record, its state and its flow."""
    from ansible_collections.lcm.openstack.plugins.module_utils import flow, flow_lease, lease_renewer
    from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import Lifecycle

    dyn = _client(module)
    p = module.params
    f = p.get("flow") or {}
    req = flow.LifecycleRequest(
        service=p["service"], release=p.get("release") or p["service"], namespace=p["namespace"],
        depends_on=p.get("depends_on"), lifecycle_state=p.get("lifecycle_state"), message=p.get("reason") or "",
        flow=f.get("name"), flow_action=f.get("action"), planned=f.get("planned") or (),
        target_version=f.get("target_version") or "", from_revision=f.get("from_revision") or 0,
        result=f.get("result"),
        require_dependencies=p.get("require_dependencies", True))
    lease = None if module.check_mode or req.flow_action not in ("start", "end") else \
        flow_lease.FlowLease(dyn, req.namespace, req.service, flow_lease.holder_identity())
    try:
        taken = lease.acquire(req.flow or "") if lease and req.flow_action == "start" else None
        try:
            result = flow.run(Lifecycle(dyn, req.namespace, req.service, req.release), req, module.check_mode)
        except PhaseError:
            if taken:  # the flow did not start: nothing holds the service
                lease.release()
            raise
        if taken:
            result["lease"] = taken.message
            lease_renewer.keep_renewed(dyn, lease)
        elif lease and req.flow_action == "end":
            result["lease"] = "released" if lease.release() else "not held by this run"
    except PhaseError as exc:
        module.fail_json(msg=str(exc))
    diff = result.pop("diff")
    if module._diff:
        result["diff"] = diff
    module.exit_json(**result)


@reported
def run_update_status(module: Any) -> None:
    """lcm.openstack.update_status: compute the UpdateStatus singleton, write it if it changed."""
    from ansible_collections.lcm.openstack.plugins.module_utils.insights import Settings
    from ansible_collections.lcm.openstack.plugins.module_utils.update_status import StatusKeeper

    dyn = _client(module)
    p = module.params
    settings = Settings(pod_unready_minutes=p["pod_unready_minutes"], job_expected_seconds=p["job_expected_seconds"],
                        stall_margin_seconds=p["stall_margin_seconds"])
    try:
        result = StatusKeeper(dyn, settings, module.check_mode).run(p["details"])
    except PhaseError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=result["changed"], update_status=result["status"], report=result["report"],
                     report_lines=result["report"].splitlines())


def helm_argument_spec() -> Dict[str, Any]:
    """kubernetes.core's Helm connection options, plus what every Helm module here takes."""
    import copy

    from ansible.module_utils.basic import env_fallback
    from ansible_collections.kubernetes.core.plugins.module_utils.helm_args_common import HELM_AUTH_ARG_SPEC

    spec = copy.deepcopy(HELM_AUTH_ARG_SPEC)
    spec["binary_path"].update(aliases=["helm_binary"], fallback=(env_fallback, ["HELM_BIN"]))
    spec["secret_key_pattern"] = dict(type="str", no_log=False)
    return spec


def _helm_release_request(params: Dict[str, Any]) -> Any:
    from ansible_collections.lcm.openstack.plugins.module_utils.helm import merge_values
    from ansible_collections.lcm.openstack.plugins.module_utils.helm_release import ReleaseRequest

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


def _helm(module: Any) -> Tuple[Any, Any]:
    """The Helm CLI with kubernetes.core's connection environment, and its redactor."""
    import os

    from ansible_collections.lcm.openstack.plugins.module_utils.helm import Helm, find_helm
    from ansible_collections.lcm.openstack.plugins.module_utils.redact import DEFAULT_SECRET_KEYS

    p = module.params
    redactor = Redactor(key_pattern=p.get("secret_key_pattern") or DEFAULT_SECRET_KEYS)
    redactor.add_values(p.get("secret_values") or {}, under_secret_key=True)
    redactor.add_values(p.get("values") or {})
    try:
        binary = find_helm(p.get("binary_path"), os.environ)
    except PhaseError as exc:
        mask_release_params(p, redactor)
        module.fail_json(msg=str(exc))
    # kubernetes.core builds the HELM_KUBE* / KUBECONFIG environment from the
    # auth options; it asks the binary for its version when ca_cert is set.
    p["binary_path"] = binary
    return Helm(binary, env=dict(module.env_update), redactor=redactor), redactor


@reported
def run_helm_release(module: Any) -> None:
    """lcm.openstack.helm_release: bring one release to the state asked for."""
    from ansible_collections.lcm.openstack.plugins.module_utils.helm_release import ReleaseManager

    helm, redactor = _helm(module)
    state = module.params["state"]
    req = _helm_release_request(module.params)
    # The request holds the values; every exit from here echoes them masked.
    mask_release_params(module.params, redactor)
    # absent too: it deletes the hooks a hung uninstall left, and kept objects on a purge.
    dyn = _helm_kube_client(module)
    manager = ReleaseManager(helm, req, dyn, module.check_mode)
    actions = {"present": manager.present, "absent": manager.absent,
               "rolledback": manager.rolledback, "tested": manager.tested}
    try:
        result = actions[state]()
    except PhaseError as exc:
        _mask(module, redactor)
        _warn(module, manager.warnings)
        details = redactor.redact_deep(dict(exc.details))
        details.setdefault("command", manager.commands[-1] if manager.commands else "")
        module.fail_json(msg=redactor.redact(str(exc)), **details)
    diff = result.pop("_diff", None)
    if module._diff and diff:
        result["diff"] = diff
    _mask(module, redactor)
    _warn(module, manager.warnings)
    module.exit_json(**result)


@reported
def run_helm_release_info(module: Any) -> None:
    """lcm.openstack.helm_release_info: status, history, values and manifest of releases."""
    from ansible_collections.lcm.openstack.plugins.module_utils.release_info import release_info

    helm, redactor = _helm(module)
    try:
        releases = release_info(helm, module.params["namespace"], module.params.get("name"),
                                module.params.get("get_all_values", False))
    except PhaseError as exc:
        _mask(module, redactor)
        module.fail_json(msg=redactor.redact(str(exc)), **redactor.redact_deep(dict(exc.details)))
    _mask(module, redactor)
    module.exit_json(changed=False, releases=releases)


def _warn(module: Any, warnings: List[str]) -> None:
    for warning in warnings:
        module.warn(warning)


def _mask(module: Any, redactor: Any) -> None:
    getattr(module, "_module", module).no_log_values.update(redactor.secrets)
