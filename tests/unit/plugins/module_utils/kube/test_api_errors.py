"""plugins/module_utils/kube/api_errors.py: API failures turned into messages that say what to fix."""

from __future__ import annotations

import json
from typing import Any, Optional

import pytest
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import DynamicApiError, ForbiddenError, NotFoundError

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError, PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import (
    answered, api_call, api_error, is_authorization_denial, missing_namespace, namespace_missing, path_gone, refusal,
)

JOBS_FORBIDDEN = ('jobs.batch is forbidden: User "system:serviceaccount:awx:runner" cannot create resource '
                  '"jobs" in API group "batch" in the namespace "openstack"')
SECRETS_FORBIDDEN = ('secrets "keystone-db-user" is forbidden: User "alice" cannot patch resource "secrets" '
                     'in API group "" in the namespace "openstack"')


def _status(message: str, code: int, reason: str) -> str:
    return json.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                       "message": message, "reason": reason, "code": code})


def _api_exc(status: int, body: Optional[Any] = None, reason: str = "Reason") -> ApiException:
    exc = ApiException(status=status, reason=reason)
    exc.body = body
    return exc


@pytest.mark.parametrize("make", [
    pytest.param(lambda b: _api_exc(403, b.encode(), "Forbidden"), id="ApiException-bytes"),
    pytest.param(lambda b: _api_exc(403, b, "Forbidden"), id="ApiException-str"),
    pytest.param(lambda b: ForbiddenError(_api_exc(403, b.encode(), "Forbidden")), id="dynamic-ForbiddenError"),
])
def test_forbidden_names_the_refused_verb_resource_and_group(make: Any) -> None:
    err = api_error(make(_status(JOBS_FORBIDDEN, 403, "Forbidden")), "apply", "objects", "openstack")
    assert isinstance(err, KubeError)
    msg = str(err)
    assert "may not create jobs in namespace openstack" in msg
    assert "Grant the verb 'create' on 'jobs' (API group 'batch')" in msg
    assert "lcm-openstack-phase" in msg and "lcm.openstack.crds" in msg
    # the verb and resource of the apiserver replace the caller's guess
    assert "apply" not in msg and "objects" not in msg


def test_forbidden_on_the_update_status_names_its_cluster_role() -> None:
    message = ('updatestatuses.lifecycle.openstack.org "cluster" is forbidden: User "system:serviceaccount:'
               'openstack:lcm-runner" cannot patch resource "updatestatuses/status" in API group '
               '"lifecycle.openstack.org" at the cluster scope')
    msg = str(api_error(_api_exc(403, _status(message, 403, "Forbidden")), "patch", "updatestatuses/status"))
    assert "Grant the verb 'patch' on 'updatestatuses/status'" in msg
    assert "lcm-openstack-update-status" in msg and "ClusterRoleBinding" in msg
    listing = ('servicelifecycles.lifecycle.openstack.org is forbidden: User "bob" cannot list resource '
               '"servicelifecycles" in API group "lifecycle.openstack.org" at the cluster scope')
    assert "lcm-openstack-update-status" in str(api_error(_api_exc(403, _status(listing, 403, "Forbidden")),
                                                          "list", "servicelifecycles"))


def test_forbidden_in_the_core_group_names_no_group() -> None:
    msg = str(api_error(_api_exc(403, _status(SECRETS_FORBIDDEN, 403, "Forbidden")), "apply", "objects"))
    advice, said = msg.split(" The apiserver said: ")
    assert "Grant the verb 'patch' on 'secrets';" in advice
    assert "API group" not in advice
    assert said == SECRETS_FORBIDDEN


def test_forbidden_says_the_apiservers_namespace_and_its_own_words() -> None:
    """The namespace is the one the apiserver denied (none was given here);
    the Status message follows, which names the account in use."""
    msg = str(api_error(_api_exc(403, _status(SECRETS_FORBIDDEN, 403, "Forbidden")), "apply", "objects"))
    assert msg == ("forbidden: the credentials in use may not patch secrets in namespace openstack. Grant the verb "
                   "'patch' on 'secrets'; the ClusterRole lcm-openstack-phase of the lcm.openstack.crds role has "
                   "every rule the modules need (docs/rbac.md). The apiserver said: " + SECRETS_FORBIDDEN)
    assert "\n" not in msg


def test_forbidden_cluster_scoped_resource() -> None:
    message = ('customresourcedefinitions.apiextensions.k8s.io "phases.lifecycle.openstack.org" is forbidden: '
               'User "bob" cannot get resource "customresourcedefinitions" in API group '
               '"apiextensions.k8s.io" at the cluster scope')
    msg = str(api_error(_api_exc(403, _status(message, 403, "Forbidden")), "read", "crds"))
    assert "Grant the verb 'get' on 'customresourcedefinitions' (API group 'apiextensions.k8s.io')" in msg


ADMISSION_FORBIDDEN = ('pods "keystone-test" is forbidden: error looking up service account '
                       'openstack/keystone-test: serviceaccount "keystone-test" not found')


@pytest.mark.parametrize("message", [
    ADMISSION_FORBIDDEN,
    'pods "x" is forbidden: exceeded quota: compute, requested: cpu=1, used: cpu=4, limited: cpu=4',
    'pods "x" is forbidden: violates PodSecurity "restricted:latest": privileged',
    "forbidden by a webhook",
])
def test_a_403_that_is_not_an_authorization_denial_keeps_the_apiservers_message(message: str) -> None:
    exc = ForbiddenError(_api_exc(403, _status(message, 403, "Forbidden").encode(), "Forbidden"))
    assert not is_authorization_denial(exc)
    msg = str(api_error(exc, "patch", "pods", "openstack"))
    assert msg == f"could not patch pods in namespace openstack: HTTP 403: {message}"
    assert "credentials" not in msg and "Grant" not in msg


def test_an_rbac_denial_is_an_authorization_denial() -> None:
    assert is_authorization_denial(_api_exc(403, _status(JOBS_FORBIDDEN, 403, "Forbidden")))
    assert not is_authorization_denial(_api_exc(422, _status(JOBS_FORBIDDEN, 422, "Invalid")))


@pytest.mark.parametrize("body", [None, b"", b"<html>403 Forbidden</html>"])
def test_a_403_without_a_status_says_no_reason_was_given(body: Any) -> None:
    msg = str(api_error(_api_exc(403, body, "Forbidden"), "delete", "phases", "openstack"))
    assert msg == ("could not delete phases in namespace openstack: HTTP 403 forbidden, with no reason from the "
                   "apiserver; if the credentials lack it, grant the verb 'delete' on 'phases'")


UNAUTHORIZED = ("unauthorized: the apiserver did not accept the credentials (the token expired or is wrong, or "
                "its client certificate is not trusted). Set api_key (K8S_AUTH_API_KEY) to a valid token, or "
                "kubeconfig (K8S_AUTH_KUBECONFIG) to a kubeconfig whose user it accepts")


def test_unauthorized_gives_a_credentials_hint() -> None:
    err = api_error(_api_exc(401, _status("Unauthorized", 401, "Unauthorized")), "get", "phases", "openstack")
    assert str(err) == UNAUTHORIZED


@pytest.mark.parametrize("status,body,expected", [
    (404, _status('phases.lifecycle.openstack.org "x" not found', 404, "NotFound"),
     'could not get phases in namespace openstack: HTTP 404: phases.lifecycle.openstack.org "x" not found'),
    (409, _status('Operation cannot be fulfilled: the object has been modified', 409, "Conflict").encode(),
     "could not get phases in namespace openstack: HTTP 409: Operation cannot be fulfilled: "
     "the object has been modified"),
    (500, "etcdserver: request timed out",
     "could not get phases in namespace openstack: HTTP 500: etcdserver: request timed out"),
    (422, json.dumps({"kind": "Status", "reason": "Invalid"}),
     'could not get phases in namespace openstack: HTTP 422: {"kind": "Status", "reason": "Invalid"}'),
])
def test_other_statuses_give_status_and_message(status: int, body: Any, expected: str) -> None:
    assert str(api_error(_api_exc(status, body), "get", "phases", "openstack")) == expected


NAMESPACE_GONE = ("namespace t-gone does not exist: create it first (kubectl create namespace t-gone), or let the "
                  "lcm.openstack.install role create it (install_create_namespace: true, its default)")


def _namespace_404(name: str = "t-gone") -> Any:
    return _api_exc(404, json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                     "message": f'namespaces "{name}" not found', "reason": "NotFound",
                                     "details": {"name": name, "kind": "namespaces"}, "code": 404}).encode())


def test_a_write_into_a_namespace_that_does_not_exist_says_so_and_how_to_create_it() -> None:
    assert str(api_error(_namespace_404(), "patch", "servicelifecycles", "t-gone")) == NAMESPACE_GONE
    assert str(namespace_missing("t-gone", helm=True)) == (
        "namespace t-gone does not exist: set create_namespace: true on lcm.openstack.helm_release, or create "
        "it first (kubectl create namespace t-gone)")


def test_only_a_status_naming_the_namespace_is_a_missing_namespace() -> None:
    assert missing_namespace(_namespace_404("x")) == "x"
    named = _status('phases.lifecycle.openstack.org "x" not found', 404, "NotFound")
    assert missing_namespace(_api_exc(404, named)) == ""
    assert missing_namespace(_api_exc(404, b"404 page not found")) == ""
    assert missing_namespace(_api_exc(409, _namespace_404().body)) == ""


def _not_found(body: Any) -> Any:
    return _api_exc(404, body, "Not Found")


@pytest.mark.parametrize("body,gone", [
    pytest.param(b"404 page not found\n", True, id="no-Status"),
    pytest.param(json.dumps({"kind": "Status", "message": "the server could not find the requested resource",
                             "reason": "NotFound", "details": {}, "code": 404}), True, id="Status-naming-nothing"),
    pytest.param(json.dumps({"kind": "Status", "message": 'servicelifecycles.lifecycle.openstack.org "k" not found',
                             "reason": "NotFound", "code": 404,
                             "details": {"name": "k", "group": "lifecycle.openstack.org",
                                         "kind": "servicelifecycles"}}), False, id="named-object"),
    pytest.param(None, False, id="no-body-says-nothing"),
])
def test_a_404_for_the_path_itself_is_told_from_one_for_an_object(body: Any, gone: bool) -> None:
    assert path_gone(_not_found(body)) is gone
    assert path_gone(NotFoundError(_not_found(body))) is gone
    assert not path_gone(_namespace_404())
    assert not path_gone(_api_exc(403, b"404 page not found"))


# -- an API answer nothing caught, at the top of a module (connection.reported) ----------------

def _dynamic(status: int, message: str) -> Any:
    return DynamicApiError(_api_exc(status, _status(message, status, "Reason").encode()))


SLC_FORBIDDEN = ('servicelifecycles.lifecycle.openstack.org "svc" is forbidden: User "system:serviceaccount:'
                 't-x:nobody" cannot get resource "servicelifecycles" in API group "lifecycle.openstack.org" '
                 'in the namespace "t-x"')


def test_an_uncaught_denial_is_worded_from_the_apiservers_status() -> None:
    assert str(refusal(ForbiddenError(_api_exc(403, _status(SLC_FORBIDDEN, 403, "Forbidden").encode())))) == (
        "forbidden: the credentials in use may not get servicelifecycles in namespace t-x. Grant the verb 'get' "
        "on 'servicelifecycles' (API group 'lifecycle.openstack.org'); the ClusterRole lcm-openstack-phase of "
        "the lcm.openstack.crds role has every rule the modules need (docs/rbac.md). The apiserver said: "
        + SLC_FORBIDDEN)


def test_an_uncaught_cluster_scope_denial_names_the_cluster_role_bound_cluster_wide() -> None:
    listing = ('servicelifecycles.lifecycle.openstack.org is forbidden: User "bob" cannot list resource '
               '"servicelifecycles" in API group "lifecycle.openstack.org" at the cluster scope')
    msg = str(refusal(_dynamic(403, listing)))
    assert msg.startswith("forbidden: the credentials in use may not list servicelifecycles. Grant")
    assert "lcm-openstack-update-status" in msg and "ClusterRoleBinding" in msg


@pytest.mark.parametrize("exc,expected", [
    pytest.param(_api_exc(401, _status("Unauthorized", 401, "Unauthorized")), UNAUTHORIZED, id="401"),
    pytest.param(_dynamic(403, ADMISSION_FORBIDDEN), f"the apiserver refused a request: HTTP 403: {ADMISSION_FORBIDDEN}",
                 id="403-admission"),
    pytest.param(_api_exc(403, None, "Forbidden"), "the apiserver refused a request: HTTP 403 forbidden, with no "
                 "reason given (a proxy in front of it may have answered)", id="403-no-Status"),
    pytest.param(NotFoundError(_namespace_404()), NAMESPACE_GONE, id="404-namespace"),
])
def test_an_uncaught_api_answer_is_one_line(exc: Any, expected: str) -> None:
    msg = str(refusal(exc))
    assert msg == expected
    assert "HTTP response headers" not in msg and "\n" not in msg


@pytest.mark.parametrize("exc", [
    _api_exc(404, _status('phases.lifecycle.openstack.org "x" not found', 404, "NotFound")),
    _api_exc(500, "etcdserver: request timed out"),
    _api_exc(409, _status("conflict", 409, "Conflict")),
    KeyError("metadata"),
    PhaseError("already worded"),
])
def test_anything_else_is_left_to_its_caller(exc: Any) -> None:
    assert refusal(exc) is None


def test_other_status_without_body_uses_the_exception_text() -> None:
    msg = str(api_error(_api_exc(503, None, "Service Unavailable"), "list", "jobs"))
    assert msg.startswith("could not list jobs: HTTP 503: ")
    assert "Service Unavailable" in msg


def test_exception_without_status() -> None:
    msg = str(api_error(ConnectionRefusedError("connection refused"), "get", "phases", "openstack"))
    assert msg == "could not get phases in namespace openstack: HTTP None: connection refused"


def test_dynamic_api_error_keeps_the_status_message() -> None:
    exc = DynamicApiError(_api_exc(422, _status('Job.batch "x" is invalid: spec.template: Required value',
                                                422, "Invalid").encode()))
    assert str(api_error(exc, "create", "jobs", "ns")) == (
        'could not create jobs in namespace ns: HTTP 422: Job.batch "x" is invalid: spec.template: Required value')


# -- a failure to talk to the apiserver at all -----------------------------------------

def _max_retry(reason: BaseException) -> Any:
    from urllib3.connectionpool import HTTPSConnectionPool
    from urllib3.exceptions import MaxRetryError
    return MaxRetryError(HTTPSConnectionPool("10.0.0.9", 6443), "/api/v1/namespaces", reason)


def test_an_unreachable_apiserver_is_one_line_naming_the_option() -> None:
    from urllib3.exceptions import NewConnectionError
    from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import connection_error
    err = connection_error(_max_retry(NewConnectionError(None, "Failed to establish a new connection: "
                                                               "[Errno 111] Connection refused")))
    msg = str(err)
    assert msg.startswith("cannot reach the apiserver at 10.0.0.9:6443: ")
    assert "Connection refused" in msg and "K8S_AUTH_HOST" in msg and "\n" not in msg


def test_a_certificate_that_does_not_verify_names_the_ca_option() -> None:
    from urllib3.exceptions import SSLError
    from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import connection_error
    err = connection_error(_max_retry(SSLError("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: "
                                               "unable to get local issuer certificate (_ssl.c:1006)")),
                           "https://kube.example:6443")
    msg = str(err)
    assert msg.startswith("the certificate of https://kube.example:6443 does not verify against the CA in use")
    assert "K8S_AUTH_SSL_CA_CERT" in msg


def test_an_api_answer_or_a_bug_is_not_a_connection_error() -> None:
    from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import connection_error
    assert connection_error(_api_exc(403, _status(JOBS_FORBIDDEN, 403, "Forbidden"))) is None
    assert connection_error(KeyError("metadata")) is None


def test_a_401_names_the_connection_once_the_module_named_it() -> None:
    from ansible_collections.lcm.openstack.plugins.module_utils.kube import api_errors as errors
    asked = []
    errors.connection_named(lambda: asked.append(1) or "https://k.example:6443 (host from K8S_AUTH_HOST)")
    assert asked == []  # described only when a 401 is worded
    assert str(errors.unauthorized()).startswith(
        "unauthorized: the apiserver at https://k.example:6443 (host from K8S_AUTH_HOST) did not accept the credentials")
    assert asked == [1]
    errors.connection_named(None)
    assert str(errors.unauthorized()).startswith("unauthorized: the apiserver did not accept the credentials")


# -- api_call and answered: the one place a client's exception is caught ------------------

def _raising(exc: BaseException) -> Any:
    def call() -> None:
        raise exc
    return call


def test_a_refused_call_leaves_as_the_kube_error_naming_verb_object_and_namespace() -> None:
    cause = DynamicApiError(_api_exc(500, _status("etcdserver: request timed out", 500, "InternalError").encode()))
    with pytest.raises(KubeError) as err:
        with api_call("list", "servicelifecycles", "openstack"):
            _raising(cause)()
    assert str(err.value) == ("could not list servicelifecycles in namespace openstack: HTTP 500: "
                              "etcdserver: request timed out")
    assert err.value.__cause__ is cause


def test_a_denied_call_says_what_to_grant() -> None:
    with pytest.raises(KubeError) as err:
        with api_call("create", "jobs", "openstack"):
            _raising(ForbiddenError(_api_exc(403, _status(JOBS_FORBIDDEN, 403, "Forbidden").encode())))()
    assert str(err.value).startswith("forbidden: the credentials in use may not create jobs in namespace openstack. "
                                     "Grant the verb 'create' on 'jobs' (API group 'batch')")


def test_credentials_not_accepted_are_said_as_such() -> None:
    with pytest.raises(KubeError) as err:
        with api_call("get", "phases", "openstack"):
            _raising(DynamicApiError(_api_exc(401, _status("Unauthorized", 401, "Unauthorized"))))()
    assert str(err.value) == UNAUTHORIZED


def test_a_missing_namespace_is_said_with_how_to_create_it() -> None:
    with pytest.raises(KubeError) as err:
        with api_call("patch", "servicelifecycles", "t-gone"):
            _raising(DynamicApiError(_namespace_404()))()
    assert str(err.value) == NAMESPACE_GONE


def test_a_status_the_caller_handles_is_kept_for_it_and_ends_the_block() -> None:
    after: list = []
    with api_call("get", "phases", "openstack", handled=(404,)) as answer:
        _raising(NotFoundError(_api_exc(404, _status('phases "x" not found', 404, "NotFound"))))()
        after.append("not reached")
    assert after == [] and answer.status == 404 and isinstance(answer.error, NotFoundError) and answer


def test_a_handled_exception_class_or_test_picks_the_answer_too() -> None:
    with api_call("get", "phases", handled=(NotFoundError,)) as by_class:
        _raising(NotFoundError(_api_exc(404, "")))()
    with api_call("get", "phases", handled=lambda exc: exc.status == 409) as by_test:
        _raising(DynamicApiError(_api_exc(409, "")))()
    assert by_class.status == 404 and by_test.status == 409


def test_a_status_not_handled_is_still_worded() -> None:
    with pytest.raises(KubeError, match="^could not get phases in namespace openstack: HTTP 409"):
        with api_call("get", "phases", "openstack", handled=(404,)):
            _raising(DynamicApiError(_api_exc(409, "conflict")))()


def test_a_call_that_goes_through_keeps_no_answer() -> None:
    with api_call("get", "phases") as answer:
        pass
    assert not answer and answer.error is None and answer.status is None


def test_a_plain_clients_exception_is_looked_at_only_when_asked() -> None:
    plain = _api_exc(500, "boom")
    with pytest.raises(ApiException) as raw:
        with api_call("get", "namespaces"):
            _raising(plain)()
    assert raw.value is plain
    with pytest.raises(KubeError, match="^could not get namespaces: HTTP 500: boom$"):
        with api_call("get", "namespaces", caught=ApiException):
            _raising(plain)()


def test_anything_but_an_api_answer_passes_through_untouched() -> None:
    with pytest.raises(ValueError, match="not an answer"):
        with api_call("get", "phases", handled=lambda exc: True):
            _raising(ValueError("not an answer"))()


def test_answered_leaves_an_answer_it_does_not_handle_as_the_client_raised_it() -> None:
    gone = DynamicApiError(_api_exc(410, "expired"))
    with answered((410,)) as expired:
        _raising(gone)()
    assert expired.error is gone
    other = DynamicApiError(_api_exc(500, "boom"))
    with pytest.raises(DynamicApiError) as raw:
        with answered((410,)):
            _raising(other)()
    assert raw.value is other
