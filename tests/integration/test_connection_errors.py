"""Every failure to be let in ends the task with one line that says what to
fix: credentials the apiserver does not accept (401), an account that may not
do what the module does (403), a namespace that does not exist, and CRDs
removed behind a discovery cache that still lists them. No traceback, no
HTTP headers, never the token."""

from __future__ import annotations

import glob
import json
import os
import time
import uuid
from pathlib import Path
from typing import Any, Dict, Iterator

import pytest
import yaml
from kubernetes.dynamic.exceptions import NotFoundError, ResourceNotFoundError

from support import bed, runner_account
from support.ansible import run_module

UNAUTHORIZED = ("unauthorized: the apiserver at {server} (host from K8S_AUTH_HOST, token from K8S_AUTH_API_KEY) did "
                "not accept the credentials (the token expired or is wrong, or the client certificate is not "
                "trusted). Check them, or set api_key (K8S_AUTH_API_KEY) or kubeconfig (K8S_AUTH_KUBECONFIG) to "
                "credentials it accepts")
ROLE = ("the ClusterRole lcm-openstack-phase of the lcm.openstack.crds role has every rule the modules need "
        "(docs/rbac.md)")


def _one_line(result: Dict[str, Any], *secrets: str) -> str:
    """The failure's message, after checking that nothing else leaked."""
    assert result.get("failed") is True, result
    raw, msg = result["_raw"], result["msg"]
    for leak in ("Original traceback", "Traceback (most recent call last)", "HTTP response headers",
                 "HTTPHeaderDict", "Audit-Id", *secrets):
        assert leak not in raw, f"{leak!r} in the output:\n{raw[-3000:]}"
    assert "\n" not in msg
    return msg


@pytest.fixture
def nobody(dyn, kubeconfig, crds, namespace) -> Dict[str, str]:
    """A ServiceAccount with no rights at all, as AWX's token credential presents it."""
    dyn.resources.get(api_version="v1", kind="ServiceAccount").create(namespace=namespace, body={
        "apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "nobody"}})
    return runner_account.credential_env(dyn, kubeconfig, namespace, "nobody")


def test_an_account_without_the_rule_is_told_what_to_grant(nobody, namespace) -> None:
    """service_lifecycle's reads of the record caught nothing: the 403 reached
    the module's top (connection.reported) and was worded there."""
    token = nobody["K8S_AUTH_API_KEY"]
    user = f"system:serviceaccount:{namespace}:nobody"
    msg = _one_line(run_module("service_lifecycle", {"service": "svc", "namespace": namespace}, env=nobody), token)
    assert msg == (
        f"forbidden: the credentials in use may not get servicelifecycles in namespace {namespace}. Grant the verb "
        f"'get' on 'servicelifecycles' (API group 'lifecycle.openstack.org'); {ROLE}. The apiserver said: "
        f'servicelifecycles.lifecycle.openstack.org "svc" is forbidden: User "{user}" cannot get resource '
        f'"servicelifecycles" in API group "lifecycle.openstack.org" in the namespace "{namespace}"')
    started = run_module("service_lifecycle", {"service": "svc", "namespace": namespace,
                                               "flow": {"name": "greenfield", "action": "start"}}, env=nobody)
    assert _one_line(started, token) == (
        f"forbidden: the credentials in use may not get leases in namespace {namespace}. Grant the verb 'get' on "
        f"'leases' (API group 'coordination.k8s.io'); {ROLE}. The apiserver said: "
        f'leases.coordination.k8s.io "lcm-flow-svc" is forbidden: User "{user}" cannot get resource "leases" in '
        f'API group "coordination.k8s.io" in the namespace "{namespace}"')


@pytest.mark.parametrize("module,args", [
    ("service_lifecycle", {"service": "svc", "flow": {"name": "update", "action": "start"}}),
    ("phase_info", {}),
    ("phase", {"type": "install", "service": "svc", "state": "absent"}),
])
def test_a_token_the_apiserver_does_not_accept_names_the_credential_options(
        nobody, namespace, tmp_path, module, args) -> None:
    # A discovery cache of its own: the first request of the module is then discovery's.
    env = dict(nobody, K8S_AUTH_API_KEY="Wrong-Token-" + uuid.uuid4().hex, TMPDIR=str(tmp_path))
    result = run_module(module, dict(args, namespace=namespace), env=env)
    assert _one_line(result, env["K8S_AUTH_API_KEY"]) == UNAUTHORIZED.format(server=env["K8S_AUTH_HOST"])


# -- an apiserver that is not there: said at once, with where the connection came from -------------

def _closed_port() -> int:
    import socket
    with socket.socket() as sock:  # bound, never listening: connecting is refused
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("module,args", [("phase_info", {}), ("service_lifecycle", {"service": "svc"})])
def test_a_host_nothing_listens_on_names_it_and_where_it_was_set(kubeconfig, tmp_path, module, args) -> None:
    server = f"https://127.0.0.1:{_closed_port()}"
    env = {"K8S_AUTH_HOST": server, "K8S_AUTH_API_KEY": "Some-Token-" + uuid.uuid4().hex, "TMPDIR": str(tmp_path)}
    msg = _one_line(run_module(module, dict(args, namespace="default"), env=env), env["K8S_AUTH_API_KEY"])
    assert msg.startswith(f"cannot reach the apiserver at {server} (host from K8S_AUTH_HOST, token from "
                          "K8S_AUTH_API_KEY): ")
    assert "Connection refused" in msg
    assert msg.endswith("Check host (K8S_AUTH_HOST), the network to it, and that the apiserver is up")


def test_a_kubeconfig_whose_server_is_closed_names_the_file_context_and_cluster(kubeconfig, tmp_path) -> None:
    with open(kubeconfig, encoding="utf-8") as handle:
        config = yaml.safe_load(handle)
    server = f"https://127.0.0.1:{_closed_port()}"
    for cluster in config["clusters"]:
        cluster["cluster"]["server"] = server
    closed = tmp_path / "closed.kubeconfig"
    closed.write_text(yaml.safe_dump(config))
    context = config["current-context"]
    [cluster] = [c["context"]["cluster"] for c in config["contexts"] if c["name"] == context]
    env = {"KUBECONFIG": str(closed), "K8S_AUTH_KUBECONFIG": "", "TMPDIR": str(tmp_path)}
    msg = _one_line(run_module("phase_info", {"namespace": "default"}, env=env))
    assert msg.startswith(f"cannot reach the apiserver at {server} (kubeconfig {closed} (KUBECONFIG), context "
                          f"{context}): ")
    assert msg.endswith(f"Check the server of cluster {cluster} in that kubeconfig, the network to it, and that "
                        "the apiserver is up")


def _a_ca() -> bytes:
    """A CA made for the test: it signed nothing the apiserver presents."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "not the cluster's CA")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True).sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM)


def test_a_ca_that_does_not_sign_the_apiservers_certificate_is_named_with_the_source(
        nobody, tmp_path) -> None:
    other_ca = tmp_path / "other-ca.pem"
    other_ca.write_bytes(_a_ca())
    env = dict(nobody, K8S_AUTH_SSL_CA_CERT=str(other_ca), TMPDIR=str(tmp_path))
    msg = _one_line(run_module("phase_info", {"namespace": "default"}, env=env), env["K8S_AUTH_API_KEY"])
    assert msg.startswith(f"the certificate of the apiserver at {env['K8S_AUTH_HOST']} (host from K8S_AUTH_HOST, "
                          "token from K8S_AUTH_API_KEY) does not verify against the CA in use (")


def test_a_namespace_that_does_not_exist_is_said_so_with_how_to_create_it(kubeconfig, crds) -> None:
    ns = f"t-no-such-namespace-{uuid.uuid4().hex[:5]}"
    create = (f"namespace {ns} does not exist: create it first (kubectl create namespace {ns}), or let the "
              "lcm.openstack.install role create it (install_create_namespace: true, its default)")
    helm = str(Path(bed.bed_var("BED_BIN")) / "helm3")
    calls = [
        ("service_lifecycle", {"service": "svc"}, create),
        ("service_lifecycle", {"service": "svc", "flow": {"name": "greenfield", "action": "start"}}, create),
        ("phase", {"type": "install", "service": "svc", "source": {"manifests": [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "svc-config"}, "data": {"a": "b"}}]}},
         create),
        ("traffic", {"service": "svc", "action": "drain", "selector_service": "svc-api"}, create),
        ("helm_release", {"name": "svc", "binary_path": os.environ.get("HELM3_BIN") or helm,
                          "chart": str(bed.ROOT / "tests" / "integration" / "charts" / "svc")},
         f"helm install of svc failed: namespace {ns} does not exist: set create_namespace: true on "
         f"lcm.openstack.helm_release, or create it first (kubectl create namespace {ns})"),
    ]
    for module, args, expected in calls:
        assert _one_line(run_module(module, dict(args, namespace=ns), kubeconfig)) == expected, module


# -- a discovery cache that outlived a CRD ------------------------------------------------------

def _rename_in_cache(cache_file: str, kind: str, plural: str) -> None:
    """Make the cache list `kind` under a path the apiserver does not serve,
    as it lists a CRD removed since the cache was written."""
    with open(cache_file, encoding="utf-8") as handle:
        cache = json.load(handle)
    found = 0
    for version in cache["resources"]["apis"]["lifecycle.openstack.org"].values():
        for entry in version["resources"].get(kind, []):
            if entry.get("_type") == "Resource":
                entry["name"], found = plural, found + 1
    assert found == 1, cache["resources"]["apis"]["lifecycle.openstack.org"]
    with open(cache_file, "w", encoding="utf-8") as handle:
        json.dump(cache, handle)


def test_a_stale_discovery_cache_is_refreshed_and_the_module_goes_on(kubeconfig, crds, namespace, tmp_path) -> None:
    """The module's cache (in its TMPDIR) says servicelifecycles are served where
    nothing answers but `404 page not found`: the module looks again and works,
    rather than taking the 404 for a missing record and failing to write it."""
    env = {"TMPDIR": str(tmp_path)}
    args = {"service": "svc", "namespace": namespace}
    first = run_module("service_lifecycle", args, kubeconfig, env=env)
    assert first.get("failed") is None and first["changed"] is True, first.get("msg")
    (cache_file,) = glob.glob(str(tmp_path / "k8srcp-*.json"))
    _rename_in_cache(cache_file, "ServiceLifecycle", "servicelifecyclesremoved")
    again = run_module("service_lifecycle", dict(args, lifecycle_state="Planning"), kubeconfig, env=env)
    assert again.get("failed") is None, again.get("msg")
    assert again["lifecycle"]["state"] == "Planning"
    assert "servicelifecyclesremoved" not in Path(cache_file).read_text(encoding="utf-8")


@pytest.fixture
def widget_crd(dyn) -> Iterator[Dict[str, str]]:
    """A throwaway CRD of a group of this test's own: nothing else uses it, so it may be removed."""
    group = f"t{uuid.uuid4().hex[:8]}.lcm-test.example"
    name = f"widgets.{group}"
    crds_res = dyn.resources.get(api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition")
    crds_res.create(body={
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": name},
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                     "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}})
    try:
        _until(lambda: any(c["type"] == "Established" and c["status"] == "True"
                           for c in (crds_res.get(name=name).to_dict().get("status") or {}).get("conditions") or []))
        yield {"name": name, "group": group, "api_version": f"{group}/v1"}
    finally:
        try:
            crds_res.delete(name=name)
        except NotFoundError:
            pass


def _until(check: Any, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.5)


def test_a_crd_removed_behind_a_stale_cache_is_said_to_be_missing(dyn, namespace, widget_crd, tmp_path) -> None:
    """crd.CrdResource against the apiserver's own 404, on a CRD of the test's own."""
    from ansible_collections.kubernetes.core.plugins.module_utils.client.discovery import LazyDiscoverer
    from ansible_collections.kubernetes.core.plugins.module_utils.k8sdynamicclient import K8SDynamicClient
    from ansible_collections.lcm.openstack.plugins.module_utils.kube.crd import CrdResource
    from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
    from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import path_gone

    cached = K8SDynamicClient(dyn.client, cache_file=str(tmp_path / "discovery.json"), discoverer=LazyDiscoverer)
    missing = f"the Widget CRD ({widget_crd['name']}) is not installed"
    widgets = CrdResource(cached, widget_crd["api_version"], "Widget", lambda: PhaseError(missing))
    assert widgets.get(namespace=namespace).to_dict()["items"] == []

    dyn.resources.get(api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition").delete(
        name=widget_crd["name"])

    def path_is_gone() -> bool:
        try:
            widgets.resource.get(namespace=namespace)  # the cached resource, as a module would use it
        except NotFoundError as exc:
            assert path_gone(exc), exc.body  # '404 page not found': no Status naming an object
            return True
        return False
    _until(path_is_gone)

    def not_discovered() -> bool:
        fresh = K8SDynamicClient(dyn.client, cache_file=str(tmp_path / "fresh.json"), discoverer=LazyDiscoverer)
        try:
            fresh.resources.get(api_version=widget_crd["api_version"], kind="Widget")
        except ResourceNotFoundError:
            return True
        finally:
            os.unlink(tmp_path / "fresh.json")
        return False
    _until(not_discovered)

    with pytest.raises(PhaseError) as err:
        widgets.get(name="w", namespace=namespace)
    assert str(err.value) == missing
    assert isinstance(err.value.__cause__, NotFoundError)
