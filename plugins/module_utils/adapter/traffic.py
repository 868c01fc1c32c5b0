# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The adapter of lcm.openstack.traffic: module parameters in, a
TrafficRequest out, the run's result or failure back to Ansible."""

from __future__ import annotations

from typing import Any, Dict, List

from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import yaml
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LcmError
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.common import forget_secrets, given, warn
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.phase_request import request_from_params
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.connection import client, reported
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import Redactor
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.check import Check
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.request import TrafficRequest
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.runner import TrafficRunner
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.check import masked_url


def request(p: Dict[str, Any]) -> TrafficRequest:
    """The request the module's parameters describe."""
    service, release = p["service"], p.get("release") or p["service"]
    check = None
    if p.get("check"):
        c = p["check"]
        test = request_from_params(dict(
            given(c, "source", "timeout"), type="test", service=service, release=release,
            namespace=p["namespace"], target_version=p.get("target_version"))) if c.get("test_phase") else None
        check = Check(test=test, **given(c, "url", "expect_status", "timeout", "validate_certs", "ca_path",
                                         "client_cert", "client_key", "use_proxy"))
        if check.url is not None:
            # Imported here: Ansible's URL helpers load some 50 modules, which
            # only a URL check uses (tests/unit/plugins/modules/test_payloads.py).
            from ansible_collections.lcm.openstack.plugins.module_utils.adapter.urls import url_opener  # pylint: disable=import-outside-toplevel
            check.opener = url_opener(check)
    return TrafficRequest(
        action=p["action"], service=service, release=release, namespace=p["namespace"], check=check,
        **given(p, "backend", "target_version", "selector_service", "selector_mode", "selector_label", "track",
                "fallback_track", "min_ready", "ingress", "route", "canary_service", "canary_port", "steps",
                "pause_seconds", "timeout", "drain_grace_seconds"))


def mask_params(params: Dict[str, Any], redactor: Redactor) -> None:
    """Mask the credentials in the parameters Ansible echoes back (the
    invocation) as whole field values: no_log values only reach those that
    are distinctive enough to be masked as free text."""
    check = params.get("check") or {}
    if check.get("url"):
        check["url"] = masked_url(check["url"])
    source = check.get("source") or {}
    if source.get("values"):
        source["values"] = redactor.mask_values(source["values"])


@reported
def run(module: Any) -> None:
    """lcm.openstack.traffic: drain a service's traffic, or roll it out, recorded as a Phase."""
    dyn = client(module)
    req = request(module.params)
    end = module.params.get("end_flow")
    runner = None
    try:
        runner = TrafficRunner(dyn, req, check_mode=module.check_mode, flow_ends_after=bool(end))
        result = runner.run()
    except LcmError as exc:
        forget_secrets(module, runner)
        mask_params(module.params, runner.redactor if runner else Redactor())
        details = dict(exc.details)
        details.pop("diff", None)
        module.fail_json(msg=str(exc), **details)
    forget_secrets(module, runner)
    mask_params(module.params, runner.redactor)
    if end:
        end_flow(module, dyn, req, end, result)
    diff = result.pop("diff", None)
    if module._diff and diff and result["changed"]:
        result["diff"] = dict(diff, before=yaml.safe_dump(diff["before"], sort_keys=True),
                              after=yaml.safe_dump(diff["after"], sort_keys=True))
    module.exit_json(**result)


def end_flow(module: Any, dyn: Any, req: TrafficRequest, end: Dict[str, Any], result: Dict[str, Any]) -> None:
    """The traffic is where the flow wanted it: end the flow in this process
    (lifecycle/flow_end.py), as lcm.openstack.service_lifecycle's
    flow.action=end does, and add its record, report and Lease to `result`."""
    # Imported here: only a flow's last rollout ends a flow, and the traffic
    # module starts with no more modules than kubernetes.core.k8s (test_payloads.py).
    from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import flow_end  # pylint: disable=import-outside-toplevel

    warnings: List[str] = []
    ending = flow_end.request(req.service, req.release, req.namespace,
                              **given(end, "name", "result", "lifecycle_state", "reason"))
    try:
        ended = flow_end.end(dyn, ending, module.check_mode, warnings, changed_before=result["changed"])
    except LcmError as exc:
        warn(module, warnings)
        details = {k: v for k, v in result.items() if k != "diff"}
        module.fail_json(msg=f"{result['message']}; the {ending.flow} flow was not ended: {exc}", **details)
    warn(module, warnings)
    result.update({k: ended[k] for k in ("lifecycle", "report", "lease") if k in ended},
                  changed=result["changed"] or ended["changed"])
