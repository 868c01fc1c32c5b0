"""Fixtures for tests that run against a real cluster (the bed, or $KUBECONFIG)."""

from __future__ import annotations

import os
import uuid
from typing import Iterator

import pytest
import yaml
from kubernetes import dynamic

from support import bed, kube, openstack_helm


@pytest.fixture(scope="session")
def cluster() -> Iterator[bed.Cluster]:
    c = bed.resolve()
    yield c
    bed.release(c)


@pytest.fixture(scope="session")
def kubeconfig(cluster: bed.Cluster) -> str:
    return cluster.kubeconfig


@pytest.fixture(scope="session")
def dyn(kubeconfig: str) -> dynamic.DynamicClient:
    return kube.dynamic_client(kubeconfig)


@pytest.fixture(scope="session")
def kubectl(kubeconfig: str):
    import subprocess

    binary = bed.kubectl_bin()

    def run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
        env = dict(os.environ, KUBECONFIG=kubeconfig)
        return subprocess.run([binary, *args], env=env, check=check,
                              capture_output=True, text=True)
    return run


CRD_DIR = bed.ROOT / "roles" / "crds" / "files"


@pytest.fixture(scope="session")
def crds(dyn: dynamic.DynamicClient) -> None:
    """The lifecycle CRDs and the modules' ClusterRole, applied as the crds role does."""
    for path in sorted(CRD_DIR.glob("*.yaml")):
        body = yaml.safe_load(path.read_text())
        res = dyn.resources.get(api_version=body["apiVersion"], kind=body["kind"])
        res.server_side_apply(body=body, name=body["metadata"]["name"],
                              field_manager="lcm.openstack-tests", force_conflicts=True)
        if body["kind"] == "CustomResourceDefinition":
            kube.wait_for(dyn, "apiextensions.k8s.io/v1", "CustomResourceDefinition",
                          body["metadata"]["name"], None, kube.has_condition("Established"))
    dyn.resources.invalidate_cache()


@pytest.fixture
def namespace(dyn: dynamic.DynamicClient, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace for one test, deleted afterwards."""
    base = request.node.name.lower().replace("_", "-").replace("[", "-").rstrip("]")
    name = f"t-{base[:40].strip('-')}-{uuid.uuid4().hex[:5]}"
    ns = dyn.resources.get(api_version="v1", kind="Namespace")
    ns.create(body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    # Pods are refused until the namespace's default ServiceAccount exists, and
    # held until the root CA ConfigMap their service-account volume projects is
    # published (a kubelet, and the bed, wait for it as for any volume's object):
    # a test that reads what a pod waits for starts once both are there.
    kube.wait_for(dyn, "v1", "ServiceAccount", "default", name, lambda _: True, timeout=30)
    kube.wait_for(dyn, "v1", "ConfigMap", "kube-root-ca.crt", name, lambda _: True, timeout=30)
    yield name
    ns.delete(name=name)


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    """Tests marked `bed` drive the bed's fake kubelet; on another cluster they
    cannot mean anything, so they are reported as skipped with the reason."""
    if not os.environ.get("KUBECONFIG") or os.environ.get("KUBECONFIG") == os.path.join(
            bed.bed_var("BED_STATE"), "kubeconfig"):
        return
    skip = pytest.mark.skip(reason="needs the local test bed's fake kubelet (unset KUBECONFIG)")
    for item in items:
        if "bed" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def openstack_infrastructure(kubeconfig: str) -> str:
    """The namespace `openstack` with the stock mariadb, memcached and rabbitmq
    releases Ready (installed once, reused by later sessions), for tests that
    deploy OpenStack services from the real openstack-helm charts."""
    openstack_helm.install_infrastructure(kubeconfig, "openstack")
    return "openstack"
