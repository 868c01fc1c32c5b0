"""plugins/module_utils/adapter/traffic.py: the module's parameters become the
request (the spec's defaults are the engine's), the parameters Ansible
echoes back carry no credential of a check, and end_flow ends the flow in
the same process once the move succeeded."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest
from support.fake_module import FakeModule, ended

from ansible_collections.lcm.openstack.plugins.module_utils.adapter import traffic as adapter
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.traffic import mask_params, request
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError, PhaseFailed
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import flow_end
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


# -- the flow's end, in the rollout's process ------------------------------------------------

def _module(**given: Any) -> FakeModule:
    return FakeModule(module, **dict(_params(), **given))


def _end_flow(**given: Any) -> Dict[str, Any]:
    """end_flow as Ansible hands it over: the suboptions' defaults filled in."""
    options = module.argument_spec()["end_flow"]["options"]
    return dict({name: option.get("default") for name, option in options.items()}, **given)


class _Runner:
    """TrafficRunner's stand-in: how it was made (`made`), and the move's outcome (`outcome`)."""

    made: Dict[str, Any] = {}
    outcome: Dict[str, Any] = {}

    def __init__(self, dyn: Any, req: TrafficRequest, check_mode: bool = False, flow_ends_after: bool = False) -> None:
        _Runner.made = {"check_mode": check_mode, "flow_ends_after": flow_ends_after}
        self.redactor = Redactor()

    def run(self) -> Dict[str, Any]:
        if _Runner.outcome.get("fails"):
            raise PhaseFailed(_Runner.outcome["fails"], changed=True, phase={"state": "Failed"})
        return {"changed": _Runner.outcome["changed"], "phase": None, "backend": "service_selector",
                "message": "Service keystone-api selects the release's pods: 2 ready endpoint(s)", "diff": None}


class _Ends:
    """lifecycle/flow_end.py's end, as the adapter calls it: each call in `calls`; `answer` says
    whether the end changed the record, raises, or warns."""

    def __init__(self) -> None:
        self.calls: List[Dict[str, Any]] = []
        self.answer: Dict[str, Any] = {"changed": True}

    def end(self, dyn: Any, req: Any, check_mode: bool, warnings: List[str],
            changed_before: bool = False) -> Dict[str, Any]:
        self.calls.append({"req": req, "check_mode": check_mode, "changed_before": changed_before})
        warnings.extend(self.answer.get("warnings", []))
        if self.answer.get("raises"):
            raise PhaseError(self.answer["raises"])
        return {"changed": self.answer["changed"], "lifecycle": {"state": "Operational"},
                "report": "keystone (openstack): greenfield flow Succeeded", "lease": "released", "diff": {}}


@pytest.fixture
def ends(monkeypatch: pytest.MonkeyPatch) -> _Ends:
    ends = _Ends()
    monkeypatch.setattr(adapter, "client", lambda module_: object())
    monkeypatch.setattr(adapter, "TrafficRunner", _Runner)
    monkeypatch.setattr(flow_end, "end", ends.end)
    _Runner.outcome = {"changed": True}
    return ends


def _run(mod: FakeModule) -> Dict[str, Any]:
    """The task's result (failed or not), as the adapter ended it."""
    return ended(adapter.run, mod).result


def test_a_rollout_with_end_flow_ends_the_flow_in_its_own_process(ends: _Ends) -> None:
    out = _run(_module(end_flow=_end_flow(name="greenfield")))
    (end,) = ends.calls
    req = end["req"]
    assert (req.service, req.namespace, req.flow, req.flow_action, req.result, req.lifecycle_state, req.message) == (
        "keystone", "openstack", "greenfield", "end", "Succeeded", "Operational", "")
    # The Phase left its end's refresh to the flow's end, told that the record changed.
    assert _Runner.made["flow_ends_after"] is True and end["changed_before"] is True
    assert out["changed"] is True and out["lease"] == "released"
    assert out["lifecycle"] == {"state": "Operational"} and out["report"].endswith("Succeeded")
    assert "diff" not in out


def test_a_rerun_that_finds_the_traffic_and_the_flow_ended_changes_nothing(ends: _Ends) -> None:
    _Runner.outcome = {"changed": False}
    ends.answer["changed"] = False
    out = _run(_module(end_flow=_end_flow(name="greenfield", reason="opened")))
    assert out["changed"] is False and ends.calls[0]["changed_before"] is False
    assert ends.calls[0]["req"].message == "opened"


def test_the_end_alone_changing_the_record_is_a_change(ends: _Ends) -> None:
    _Runner.outcome = {"changed": False}  # a re-run interrupted between the rollout and the end
    assert _run(_module(end_flow=_end_flow(name="greenfield")))["changed"] is True


def test_a_failed_move_ends_no_flow(ends: _Ends) -> None:
    _Runner.outcome = {"fails": "timed out after 300s: no ready endpoint"}
    end = ended(adapter.run, _module(end_flow=_end_flow(name="greenfield")))
    assert end.failed and end.result["msg"] == "timed out after 300s: no ready endpoint" and ends.calls == []


def test_an_end_that_fails_fails_the_task_saying_the_traffic_moved(ends: _Ends) -> None:
    ends.answer.update(raises="no greenfield flow was started for this service; start it first (flow.action=start)",
                       warnings=["the UpdateStatus was not refreshed: 403"])
    mod = _module(end_flow=_end_flow(name="greenfield"))
    end = ended(adapter.run, mod)
    assert end.failed
    assert end.result["msg"] == ("Service keystone-api selects the release's pods: 2 ready endpoint(s); the greenfield "
                                 "flow was not ended: no greenfield flow was started for this service; start it "
                                 "first (flow.action=start)")
    assert end.result["changed"] is True and "diff" not in end.result
    assert mod.warnings == ["the UpdateStatus was not refreshed: 403"]


def test_check_mode_asks_the_end_in_check_mode(ends: _Ends) -> None:
    _run(FakeModule(module, check_mode=True, **dict(_params(), end_flow=_end_flow(name="greenfield"))))
    assert _Runner.made["check_mode"] is True and ends.calls[0]["check_mode"] is True


def test_without_end_flow_the_phase_refreshes_its_own_end_and_no_flow_ends(ends: _Ends) -> None:
    out = _run(_module())
    assert _Runner.made["flow_ends_after"] is False and ends.calls == []
    assert not {"lifecycle", "report", "lease"} & set(out)
