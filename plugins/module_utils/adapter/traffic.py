# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The adapter of lcm.openstack.traffic: module parameters in, a
TrafficRequest out, the run's result or failure back to Ansible."""

from __future__ import annotations

from typing import Any, Dict

from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import yaml
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.common import forget_secrets
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.connection import client, reported
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.phase import request_from_params
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
        test = request_from_params({
            "type": "test", "service": service, "release": release, "namespace": p["namespace"],
            "target_version": p.get("target_version"), "source": c.get("source") or {},
            "timeout": c.get("timeout")}) if c.get("test_phase") else None
        check = Check(url=c.get("url"), expect_status=c.get("expect_status") or 200, timeout=c.get("timeout"),
                      test=test)
    return TrafficRequest(
        action=p["action"], service=service, release=release, namespace=p["namespace"],
        backend=p.get("backend") or "service_selector", target_version=p.get("target_version") or "",
        selector_service=p.get("selector_service"), selector_mode=p.get("selector_mode") or "gate",
        selector_label=p.get("selector_label") or "track",
        track=p.get("track"), fallback_track=p.get("fallback_track"),
        min_ready=1 if p.get("min_ready") is None else p["min_ready"],
        ingress=p.get("ingress"), route=p.get("route"), canary_service=p.get("canary_service"),
        canary_port=p.get("canary_port"), steps=p.get("steps") or (10, 50, 100),
        pause_seconds=p.get("pause_seconds") or 0, check=check, timeout=p.get("timeout") or 300,
        drain_grace_seconds=p.get("drain_grace_seconds"))


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
    runner = None
    try:
        runner = TrafficRunner(dyn, req, check_mode=module.check_mode)
        result = runner.run()
    except PhaseError as exc:
        forget_secrets(module, runner)
        mask_params(module.params, runner.redactor if runner else Redactor())
        details = dict(exc.details)
        details.pop("diff", None)
        module.fail_json(msg=str(exc), **details)
    forget_secrets(module, runner)
    mask_params(module.params, runner.redactor)
    diff = result.pop("diff", None)
    if module._diff and diff and result["changed"]:
        result["diff"] = dict(diff, before=yaml.safe_dump(diff["before"], sort_keys=True),
                              after=yaml.safe_dump(diff["after"], sort_keys=True))
    module.exit_json(**result)
