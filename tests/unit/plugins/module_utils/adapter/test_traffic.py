"""plugins/module_utils/adapter/traffic.py: the module's parameters become the
request (the spec's defaults are the engine's), and the parameters Ansible
echoes back carry no credential of a check."""

from __future__ import annotations

from typing import Any, Dict

from ansible_collections.lcm.openstack.plugins.module_utils.adapter.traffic import mask_params, request
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.request import TrafficRequest
from ansible_collections.lcm.openstack.plugins.modules import traffic as module
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import MASK, Redactor


def test_the_echoed_parameters_mask_the_check_credentials_as_field_values() -> None:
    params = {"action": "rollout", "check": {
        "url": "http://admin:admin@keystone/v3",  # short and a word: not masked as free text, masked here
        "source": {"chart": "/srv/keystone", "values": {"endpoints": {"identity": {"auth": {"admin": {
            "username": "admin", "password": "password"}}}}}}}}
    mask_params(params, Redactor())
    assert params["check"]["url"] == "http://admin:********@keystone/v3"
    assert params["check"]["source"]["values"]["endpoints"]["identity"]["auth"]["admin"] == {
        "username": "admin", "password": MASK}
    assert params["check"]["source"]["chart"] == "/srv/keystone" and params["action"] == "rollout"


def _params(**given: Any) -> Dict[str, Any]:
    params = {name: option.get("default") for name, option in module.argument_spec().items()}
    params.update(action="rollout", service="keystone", namespace="openstack", selector_service="keystone-api")
    params.update(given)
    return params


def test_the_specs_defaults_are_the_requests_defaults() -> None:
    assert request(_params()) == TrafficRequest(action="rollout", service="keystone", release="keystone",
                                                namespace="openstack", selector_service="keystone-api",
                                                steps=[10, 50, 100])


def test_a_zero_given_stays_zero_for_the_request_to_refuse() -> None:
    req = request(_params(timeout=0, min_ready=0, pause_seconds=0))
    assert (req.timeout, req.min_ready, req.pause_seconds) == (0, 0, 0)


def test_a_check_by_test_phase_runs_a_test_phase_of_the_same_service() -> None:
    req = request(_params(backend="ingress_canary", ingress="keystone", target_version="2025.2", check={
        "url": None, "expect_status": 200, "timeout": None, "test_phase": True,
        "source": {"chart": "/srv/keystone", "values_files": [], "stage_value": "lifecycle.phase"}}))
    test = req.check.test
    assert (test.type, test.service, test.namespace, test.target_version) == ("test", "keystone", "openstack", "2025.2")
    assert test.timeout == 600 and test.source.chart == "/srv/keystone" and req.check.expect_status == 200


def _check_defaults(**given: Any) -> Dict[str, Any]:
    options = module.argument_spec()["check"]["options"]
    return dict({name: option.get("default") for name, option in options.items()}, **given)


def test_a_url_checks_tls_and_proxy_options_reach_the_check_with_an_opener() -> None:
    req = request(_params(backend="ingress_canary", ingress="keystone", check=_check_defaults(
        url="https://keystone/v3", ca_path="/etc/pki/ca.pem", client_cert="/etc/pki/me.pem")))
    check = req.check
    assert (check.validate_certs, check.ca_path, check.client_cert, check.client_key, check.use_proxy) == (
        True, "/etc/pki/ca.pem", "/etc/pki/me.pem", None, True)
    assert callable(check.opener)
    check = request(_params(check=_check_defaults(url="http://k/", validate_certs=False, use_proxy=False))).check
    assert (check.validate_certs, check.use_proxy) == (False, False)


def test_a_check_by_test_phase_has_no_opener() -> None:
    check = request(_params(check=_check_defaults(test_phase=True, source={"chart": "/srv/keystone"}))).check
    assert check.opener is None
