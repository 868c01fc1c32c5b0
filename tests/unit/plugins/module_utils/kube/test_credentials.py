"""plugins/module_utils/kube/credentials.py: where the connection comes
from, named as kubernetes.core picks it (fixtures/credentials/sources.yaml),
and the one line for an apiserver not reached, not trusted, or refusing the
credentials. Never a token."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import pytest
import yaml
from kubernetes.client.exceptions import ApiException
from urllib3.connectionpool import HTTPSConnectionPool
from urllib3.exceptions import MaxRetryError, NameResolutionError, NewConnectionError, SSLError

from support.paths import UNIT_FIXTURES

from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import failure_reason
from ansible_collections.lcm.openstack.plugins.module_utils.kube import credentials
from ansible_collections.lcm.openstack.plugins.module_utils.kube.credentials import Source

FIXTURE = yaml.safe_load((UNIT_FIXTURES / "credentials" / "sources.yaml").read_text())


def _placed(value: Any, where: Path) -> Any:
    return json.loads(json.dumps(value).replace("KUBECONFIG_DIR", str(where)))


@pytest.mark.parametrize("case", FIXTURE["cases"], ids=lambda c: c["name"])
def test_the_source_is_named_as_kubernetes_core_picks_it(case: Dict[str, Any], tmp_path: Path) -> None:
    (tmp_path / "config").write_text(yaml.safe_dump(FIXTURE["kubeconfig"]))
    token = tmp_path / "token"
    if case.get("in_cluster"):
        token.write_text("Pod-Token-99")
    src = credentials.source(_placed(case["params"], tmp_path), _placed(case["environ"], tmp_path),
                             show_path=case.get("show_path", True), in_cluster_token=str(token))
    assert src == Source(**_placed(case["expect"], tmp_path))
    for user in FIXTURE["kubeconfig"]["users"]:
        assert user["user"]["token"] not in str(src)
    assert "Opt-Token-1" not in str(src) and "Env-Token-2" not in str(src)


def _refused(host: str = "127.0.0.1", port: int = 1) -> Exception:
    return MaxRetryError(HTTPSConnectionPool(host, port), "/version",
                         NewConnectionError(None, "Failed to establish a new connection: [Errno 111] Connection refused"))


SRC = Source("https://127.0.0.1:1", "host from K8S_AUTH_HOST, token from K8S_AUTH_API_KEY", "host (K8S_AUTH_HOST)")


def _said(exc: Exception, src: Source = SRC) -> str:
    err = credentials.contact_error(exc, src, failure_reason(exc))
    assert err is not None
    return str(err)


def test_a_server_that_refuses_names_endpoint_source_and_what_to_check() -> None:
    assert _said(_refused()) == (
        "cannot reach the apiserver at https://127.0.0.1:1 (host from K8S_AUTH_HOST, token from K8S_AUTH_API_KEY): None: "
        "Failed to establish a new connection: [Errno 111] Connection refused. Check host (K8S_AUTH_HOST), the "
        "network to it, and that the apiserver is up")


def test_a_name_that_does_not_resolve_is_unreachable_too() -> None:
    exc = MaxRetryError(HTTPSConnectionPool("kube.invalid", 6443), "/version",
                        NameResolutionError("kube.invalid", None, OSError("[Errno -2] Name or service not known")))
    assert _said(exc).startswith("cannot reach the apiserver at https://127.0.0.1:1 (host from K8S_AUTH_HOST")


def test_a_source_without_a_server_takes_the_host_the_client_tried() -> None:
    src = Source("", "kubeconfig /nowhere (KUBECONFIG)", "the kubeconfig's server")
    assert _said(_refused("10.0.0.9", 6443), src).startswith(
        "cannot reach the apiserver at 10.0.0.9:6443 (kubeconfig /nowhere (KUBECONFIG)): ")


def test_a_certificate_that_does_not_verify_names_the_ca_options() -> None:
    exc = MaxRetryError(HTTPSConnectionPool("127.0.0.1", 1), "/version", SSLError(
        "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable to get local issuer certificate"))
    said = _said(exc)
    assert said.startswith("the certificate of the apiserver at https://127.0.0.1:1 (host from K8S_AUTH_HOST, token "
                           "from K8S_AUTH_API_KEY) does not verify against the CA in use ([SSL: ")
    assert said.endswith("Set ca_cert (K8S_AUTH_SSL_CA_CERT) or the kubeconfig's certificate-authority to the "
                         "cluster's CA")


def test_credentials_the_apiserver_does_not_accept_name_where_they_came_from() -> None:
    exc = ApiException(status=401, reason="Unauthorized")
    exc.headers = {"Audit-Id": "6b503f19", "Authorization": "Bearer Env-Token-2"}
    said = _said(exc)
    assert said.startswith("unauthorized: the apiserver at https://127.0.0.1:1 (host from K8S_AUTH_HOST, token from "
                           "K8S_AUTH_API_KEY) did not accept the credentials")
    assert "Audit-Id" not in said and "Env-Token-2" not in said


@pytest.mark.parametrize("exc", [ApiException(status=403, reason="Forbidden"), ApiException(status=503),
                                 KeyError("metadata"), ConnectionResetError("reset by peer")])
def test_anything_else_is_left_to_the_other_words(exc: Exception) -> None:
    assert credentials.contact_error(exc, SRC, failure_reason(exc)) is None
