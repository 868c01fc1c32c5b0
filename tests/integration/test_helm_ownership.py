"""lcm.openstack.helm_release on the bed, with Helm 3 and Helm 4: the stock
mariadb chart installed in two namespaces. Its CustomResourceDefinitions are
cluster-scoped and only one release can own them, so the second install
fails, and says which release owns them and the value that switches them
off (helm/ownership.py); with that value, it installs.

The CRDs are kept by Helm when their release is uninstalled. A mariadb
release of another test may own them already: the first install here then
leaves them to it, and the second names that owner. CRDs this test made are
deleted at its end, so that a later install that renders them (a site's
mariadb) does not meet this test's gone release as their owner."""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path
from typing import Any, Dict, Iterator, Optional, Tuple

import pytest
from kubernetes import dynamic

from support import bed, openstack_helm
from support.ansible import run_module

OWNER_NAME, OWNER_NAMESPACE = "meta.helm.sh/release-name", "meta.helm.sh/release-namespace"
GROUP = "mariadb.osh.openstack.org"


@pytest.fixture(params=["helm3", "helm4"])
def helm(request: pytest.FixtureRequest) -> str:
    env_name = {"helm3": "HELM3_BIN", "helm4": "HELM4_BIN"}[request.param]
    return os.environ.get(env_name) or str(Path(bed.bed_var("BED_BIN")) / request.param)


@pytest.fixture
def two_namespaces(dyn: dynamic.DynamicClient) -> Iterator[Tuple[str, str]]:
    suffix = uuid.uuid4().hex[:5]
    names = (f"t-crd-owner-{suffix}", f"t-crd-second-{suffix}")
    ns = dyn.resources.get(api_version="v1", kind="Namespace")
    for name in names:
        ns.create(body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield names
    for name in names:
        ns.delete(name=name)


def _crds(dyn: dynamic.DynamicClient) -> Dict[str, Dict[str, Any]]:
    """The mariadb chart's CRDs in the cluster, by name."""
    res = dyn.resources.get(api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition")
    return {c["metadata"]["name"]: c for c in res.get().to_dict()["items"] if c["spec"]["group"] == GROUP}


def _owner(crd: Optional[Dict[str, Any]]) -> Tuple[str, str]:
    notes = ((crd or {}).get("metadata") or {}).get("annotations") or {}
    return notes.get(OWNER_NAME, ""), notes.get(OWNER_NAMESPACE, "")


def test_a_second_mariadb_release_is_told_who_owns_the_crds_and_the_value_that_leaves_them_out(
        helm: str, kubeconfig: str, dyn: dynamic.DynamicClient, two_namespaces: Tuple[str, str]) -> None:
    first_ns, second_ns = two_namespaces
    chart = str(openstack_helm.chart("mariadb"))
    there = _crds(dyn)

    def release(namespace: str, **args: Any) -> Dict[str, Any]:
        return run_module("helm_release", {"name": "mariadb", "namespace": namespace, "chart": chart,
                                           "binary_path": helm, "wait": False, **args}, kubeconfig)
    try:
        crds_off = {"manifests": {"crds": False}}
        first = release(first_ns, values=crds_off if there else {})
        assert first.get("failed") is None, first.get("msg")
        owner, owner_ns = _owner(_crds(dyn).get(f"databases.{GROUP}"))
        assert (owner, owner_ns) == (_owner(there[f"databases.{GROUP}"]) if there else ("mariadb", first_ns))

        second = release(second_ns)
        assert second.get("failed") is True
        # one of the chart's CRDs: Helm stops at the first it cannot take
        assert re.match(rf"helm install of mariadb failed: CustomResourceDefinition [a-z]+\.{re.escape(GROUP)} ",
                        second["msg"]), second["msg"]
        assert (f" belongs to release {owner} in namespace {owner_ns}: it is cluster-scoped, one object for the "
                "whole cluster, and only one release can own it. Fix: set manifests.crds to false in the values of "
                f"release mariadb in namespace {second_ns} ({{manifests: {{crds: false}}}}: it switches off "
                "templates/crds.yaml, which renders it) to use the one that is there") in second["msg"]
        assert "\n" not in second["msg"] and "meta.helm.sh" not in second["msg"]
        assert "exists and cannot be imported" in second["stderr"]  # Helm's own words kept beside

        fixed = release(second_ns, values=crds_off)  # the fix the message gives
        assert fixed.get("failed") is None, fixed.get("msg")
        assert fixed["status"]["status"] == "deployed"
    finally:
        for namespace in two_namespaces:
            release(namespace, state="absent")
        if not there:
            res = dyn.resources.get(api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition")
            for name, crd in _crds(dyn).items():
                if _owner(crd) == ("mariadb", first_ns):
                    res.delete(name=name)
