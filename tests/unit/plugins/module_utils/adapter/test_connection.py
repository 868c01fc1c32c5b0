"""plugins/module_utils/adapter/connection.py: a kubeconfig option naming no file, and
what reaches a module's top uncaught (reported)."""

from __future__ import annotations

import json
from typing import Any, Dict, List

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.adapter.connection import _missing_kubeconfig, reported


class _Module:
    def __init__(self, params: Dict[str, Any]) -> None:
        self.params = params


@pytest.mark.parametrize("option, env", [(None, None), ("", None), (None, ""), ("", "")])
def test_no_kubeconfig_given_is_not_a_missing_one(option: Any, env: Any, monkeypatch: Any) -> None:
    """A token credential sets K8S_AUTH_KUBECONFIG to nothing: host and api_key connect."""
    if env is None:
        monkeypatch.delenv("K8S_AUTH_KUBECONFIG", raising=False)
    else:
        monkeypatch.setenv("K8S_AUTH_KUBECONFIG", env)
    assert _missing_kubeconfig(_Module({"kubeconfig": option})) == ""


def test_a_kubeconfig_naming_no_file_is_said_without_its_path(tmp_path: Any, monkeypatch: Any) -> None:
    monkeypatch.delenv("K8S_AUTH_KUBECONFIG", raising=False)
    missing = str(tmp_path / "nowhere" / "config")
    msg = _missing_kubeconfig(_Module({"kubeconfig": missing}))
    assert msg.startswith("the kubeconfig file given (kubeconfig or K8S_AUTH_KUBECONFIG) does not exist")
    assert missing not in msg
    monkeypatch.setenv("K8S_AUTH_KUBECONFIG", missing)
    assert _missing_kubeconfig(_Module({"kubeconfig": None})) == msg
    present = tmp_path / "config"
    present.write_text("apiVersion: v1\n")
    assert _missing_kubeconfig(_Module({"kubeconfig": str(present)})) == ""


# -- reported: what reaches a module's top uncaught -----------------------------------------

class _Failed(Exception):
    """fail_json's exit, as AnsibleModule's SystemExit."""


class _ReportingModule(_Module):
    def __init__(self) -> None:
        super().__init__({"kubeconfig": None, "host": None})
        self.failed: Dict[str, Any] = {}

    def fail_json(self, **kwargs: Any) -> None:
        self.failed = kwargs
        raise _Failed()


def _forbidden() -> Any:
    from kubernetes.client.exceptions import ForbiddenException
    from kubernetes.dynamic.exceptions import ForbiddenError

    message = ('servicelifecycles.lifecycle.openstack.org "svc" is forbidden: User "system:serviceaccount:t-x:'
               'nobody" cannot get resource "servicelifecycles" in API group "lifecycle.openstack.org" in the '
               'namespace "t-x"')
    exc = ForbiddenException(status=403, reason="Forbidden")
    exc.headers = {"Audit-Id": "b0984066", "Authorization": "Bearer do-not-print-me"}
    exc.body = json.dumps({"kind": "Status", "status": "Failure", "message": message, "reason": "Forbidden",
                           "details": {"name": "svc", "kind": "servicelifecycles"}, "code": 403}).encode()
    return ForbiddenError(exc)


def _unauthorized() -> Any:
    from kubernetes.client.exceptions import UnauthorizedException

    exc = UnauthorizedException(status=401, reason="Unauthorized")
    exc.headers = {"Audit-Id": "6b503f19"}
    exc.body = b'{"kind":"Status","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}'
    return exc


def _run_reported(exc: BaseException) -> _ReportingModule:
    module = _ReportingModule()

    @reported
    def run(_module: Any) -> None:
        raise exc
    with pytest.raises(_Failed):
        run(module)
    return module


def test_an_uncaught_denial_ends_the_task_with_one_line_and_no_headers() -> None:
    msg = _run_reported(_forbidden()).failed["msg"]
    assert msg.startswith("forbidden: the credentials in use may not get servicelifecycles in namespace t-x. "
                          "Grant the verb 'get' on 'servicelifecycles' (API group 'lifecycle.openstack.org'); "
                          "the ClusterRole lcm-openstack-phase")
    assert msg.endswith('cannot get resource "servicelifecycles" in API group "lifecycle.openstack.org" in the '
                        'namespace "t-x"')
    assert "\n" not in msg and "Audit-Id" not in msg and "Bearer" not in msg and "HTTP response" not in msg


def test_an_uncaught_401_names_the_credential_options(monkeypatch: Any) -> None:
    monkeypatch.setenv("K8S_AUTH_HOST", "https://kube.example:6443")
    monkeypatch.setenv("K8S_AUTH_API_KEY", "Some-Token-4f1c")
    msg = _run_reported(_unauthorized()).failed["msg"]
    assert msg.startswith("unauthorized: the apiserver at https://kube.example:6443 (host from K8S_AUTH_HOST, token "
                          "from K8S_AUTH_API_KEY) did not accept the credentials (the token expired or is wrong")
    assert "Some-Token-4f1c" not in msg
    assert "api_key (K8S_AUTH_API_KEY)" in msg and "kubeconfig (K8S_AUTH_KUBECONFIG)" in msg
    assert "Audit-Id" not in msg


@pytest.mark.parametrize("exc", [KeyError("metadata"), ValueError("a bug")])
def test_anything_else_is_raised_as_it_is(exc: BaseException) -> None:
    module = _ReportingModule()

    @reported
    def run(_module: Any) -> None:
        raise exc
    with pytest.raises(type(exc)):
        run(module)
    assert module.failed == {}


# -- the client: made again through a transient failure ------------------------------------

def test_the_client_is_made_again_when_discovery_is_cut_short(monkeypatch: pytest.MonkeyPatch) -> None:
    """kubernetes.core's dynamic client reads /version and the API groups as
    it is made, before its requests can be wrapped: a drop then is retried."""
    from urllib3.exceptions import ProtocolError

    from ansible_collections.lcm.openstack.plugins.module_utils.common import transient
    from ansible_collections.lcm.openstack.plugins.module_utils.adapter import connection

    class Api:
        def call_api(self, *_a: Any, **_kw: Any) -> str:
            return "sent"

    class Made:
        client = type("Dyn", (), {"client": Api()})()

    attempts: List[int] = []

    def get_api_client(module: Any = None, **_kw: Any) -> Any:
        attempts.append(1)
        if len(attempts) < 3:
            raise ProtocolError("Connection broken: IncompleteRead(1695 bytes read, 1490 more expected)")
        return Made()
    real = transient.retry
    monkeypatch.setattr(transient, "retry", lambda call, budget=0: real(call, budget, sleep=lambda _s: None))
    monkeypatch.setattr(connection, "get_api_client", get_api_client)
    dyn = connection.client(_ReportingModule())
    assert len(attempts) == 3
    assert dyn.client._lcm_retrying  # pylint: disable=protected-access
    assert dyn.client.call_api("/version", "GET") == "sent"


def test_the_clients_construction_connects_briefly_and_retries_briefly(monkeypatch: Any) -> None:
    """kubernetes.core builds the client and reads discovery inside; every
    request it sends then has the first contact's connect timeout, and the
    class is as it was afterwards."""
    import kubernetes.client

    from ansible_collections.lcm.openstack.plugins.module_utils.adapter import connection
    from ansible_collections.lcm.openstack.plugins.module_utils.common import transient
    from ansible_collections.lcm.openstack.plugins.module_utils.kube import retrying

    original = kubernetes.client.ApiClient.call_api
    sent: List[Any] = []
    monkeypatch.setattr(kubernetes.client.ApiClient, "call_api",
                        lambda self, *a, **kw: sent.append(kw.get("_request_timeout")) or "answer")
    budgets: List[float] = []
    monkeypatch.setattr(transient, "retry", lambda call, budget=0: budgets.append(budget) or call())
    api = kubernetes.client.ApiClient()

    def construct() -> Any:
        api.call_api("/version", "GET", _request_timeout=None)
        return api
    assert connection._connected(construct) is api  # pylint: disable=protected-access
    assert sent == [(retrying.FIRST_CONNECT_SECONDS, None)] and budgets == [retrying.FIRST_CONTACT_SECONDS]
    assert api._lcm_contacted is True  # pylint: disable=protected-access
    api.call_api("/api", "GET", _request_timeout=None)
    assert sent[-1] is None  # outside the construction, untouched
    monkeypatch.undo()
    assert kubernetes.client.ApiClient.call_api is original


def test_every_module_run_readies_its_process_end(monkeypatch: Any) -> None:
    """The heap frozen at exit (common/process_end.py), asked by the one wrapper every module's run has."""
    from ansible_collections.lcm.openstack.plugins.module_utils.adapter import connection
    asked: List[int] = []
    monkeypatch.setattr(connection, "freeze_heap_at_exit", lambda: asked.append(1))
    reported(lambda module: None)(_ReportingModule())
    assert asked == [1]
