"""Acceptance of the bed: the stock openstack-helm charts install on it as on
a real cluster, their jobs ordered by kubernetes-entrypoint, not by luck."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any, Dict, List

import pytest
from kubernetes import dynamic

from support import kube, openstack_helm

pytestmark = pytest.mark.bed


def helm(kubeconfig: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([openstack_helm.helm_bin(), *args], env=dict(os.environ, KUBECONFIG=kubeconfig),
                          check=True, capture_output=True, text=True)


def items(dyn: dynamic.DynamicClient, api_version: str, kind: str, namespace: str,
          selector: str = "") -> List[Dict[str, Any]]:
    res = dyn.resources.get(api_version=api_version, kind=kind)
    return res.get(namespace=namespace, label_selector=selector).to_dict()["items"]


def revision(kubeconfig: str, release: str, namespace: str) -> int:
    return json.loads(helm(kubeconfig, "status", release, "-n", namespace, "-o", "json").stdout)["version"]


def test_stock_infrastructure_and_keystone_install_in_entrypoint_order(dyn, kubeconfig, namespace) -> None:
    openstack_helm.install_infrastructure(kubeconfig, namespace)
    sets = {s["metadata"]["name"]: s for s in items(dyn, "apps/v1", "StatefulSet", namespace)}
    assert set(sets) == {"mariadb-server", "memcached-memcached", "rabbitmq-rabbitmq"}
    for name, sts in sets.items():
        assert sts["status"].get("readyReplicas") == sts["spec"]["replicas"], name
    claims = items(dyn, "v1", "PersistentVolumeClaim", namespace)
    assert claims and all(c["status"]["phase"] == "Bound" for c in claims)
    assert {c["spec"]["storageClassName"] for c in claims} == {"general"}

    # A second call reuses the deployed releases.
    openstack_helm.install_infrastructure(kubeconfig, namespace)
    assert {r: revision(kubeconfig, r, namespace) for r in openstack_helm.INFRASTRUCTURE} == {
        r: 1 for r in openstack_helm.INFRASTRUCTURE}

    helm(kubeconfig, "install", "keystone", str(openstack_helm.chart("keystone")), "-n", namespace,
         "--wait", "--wait-for-jobs", "--timeout", "5m")
    jobs = {j["metadata"]["name"]: j
            for j in items(dyn, "batch/v1", "Job", namespace, "release_group=keystone")}
    assert {"keystone-db-init", "keystone-db-sync", "keystone-credential-setup",
            "keystone-fernet-setup", "keystone-bootstrap"} <= set(jobs)
    for name, job in jobs.items():
        assert kube.condition(job, "Complete")["status"] == "True", name
    assert jobs["keystone-db-sync"]["status"]["startTime"] >= jobs["keystone-db-init"]["status"]["completionTime"]

    # keystone-api is no hook: Helm creates it before the jobs, and only its
    # entrypoint init container (DEPENDENCY_JOBS keystone-db-sync, ...) holds
    # it until they completed.
    (api,) = items(dyn, "v1", "Pod", namespace, "application=keystone,component=api")
    assert api["metadata"]["creationTimestamp"] < jobs["keystone-db-sync"]["metadata"]["creationTimestamp"]
    initialized = kube.condition(api, "Initialized")["lastTransitionTime"]
    for dependency in ("keystone-db-sync", "keystone-credential-setup", "keystone-fernet-setup"):
        assert initialized >= jobs[dependency]["status"]["completionTime"], dependency
    assert api["metadata"]["annotations"]["bed.lcm.openstack.org/dependencies"] == "satisfied"
    assert api["status"]["phase"] == "Running"
