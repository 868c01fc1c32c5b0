"""plugins/module_utils/errors.py: API failures turned into messages that say what to fix."""

from __future__ import annotations

import json
from typing import Any, Optional

import pytest
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import DynamicApiError, ForbiddenError

from ansible_collections.lcm.openstack.plugins.module_utils.errors import (
    PhaseError, PhaseFailed, api_error, is_authorization_denial,
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
    assert isinstance(err, PhaseError)
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
    assert "may not patch secrets." in msg
    assert "Grant the verb 'patch' on 'secrets';" in msg
    assert "API group" not in msg
    assert "namespace" not in msg  # none was given


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


def test_unauthorized_gives_a_credentials_hint() -> None:
    err = api_error(_api_exc(401, _status("Unauthorized", 401, "Unauthorized")), "get", "phases", "openstack")
    msg = str(err)
    assert msg.startswith("unauthorized:")
    assert "kubeconfig" in msg and "api_key" in msg and "K8S_AUTH_" in msg


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


def test_phase_error_details() -> None:
    err = PhaseFailed("failed", changed=True, phase={"name": "p"})
    assert isinstance(err, PhaseError)
    assert str(err) == "failed"
    assert err.details == {"changed": True, "phase": {"name": "p"}}
    assert PhaseError("x").details == {}


# -- a failure to talk to the apiserver at all -----------------------------------------

def _max_retry(reason: BaseException) -> Any:
    from urllib3.connectionpool import HTTPSConnectionPool
    from urllib3.exceptions import MaxRetryError
    return MaxRetryError(HTTPSConnectionPool("10.0.0.9", 6443), "/api/v1/namespaces", reason)


def test_an_unreachable_apiserver_is_one_line_naming_the_option() -> None:
    from urllib3.exceptions import NewConnectionError
    from ansible_collections.lcm.openstack.plugins.module_utils.errors import connection_error
    err = connection_error(_max_retry(NewConnectionError(None, "Failed to establish a new connection: "
                                                               "[Errno 111] Connection refused")))
    msg = str(err)
    assert msg.startswith("cannot reach the apiserver at 10.0.0.9:6443: ")
    assert "Connection refused" in msg and "K8S_AUTH_HOST" in msg and "\n" not in msg


def test_a_certificate_that_does_not_verify_names_the_ca_option() -> None:
    from urllib3.exceptions import SSLError
    from ansible_collections.lcm.openstack.plugins.module_utils.errors import connection_error
    err = connection_error(_max_retry(SSLError("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: "
                                               "unable to get local issuer certificate (_ssl.c:1006)")),
                           "https://kube.example:6443")
    msg = str(err)
    assert msg.startswith("the certificate of https://kube.example:6443 does not verify against the CA in use")
    assert "K8S_AUTH_SSL_CA_CERT" in msg


def test_an_api_answer_or_a_bug_is_not_a_connection_error() -> None:
    from ansible_collections.lcm.openstack.plugins.module_utils.errors import connection_error
    assert connection_error(_api_exc(403, _status(JOBS_FORBIDDEN, 403, "Forbidden"))) is None
    assert connection_error(KeyError("metadata")) is None
