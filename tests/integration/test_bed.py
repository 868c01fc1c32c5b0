"""The test bed is a real control plane: these tests prove the parts the
collection relies on (version, Job and Deployment controllers, the fake
kubelet's failure switch, authentication, RBAC, garbage collection)."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from typing import Any, Dict, Optional

import pytest
import yaml
from kubernetes import client as kclient
from kubernetes import dynamic
from kubernetes.client.rest import ApiException

from support import bed, kube

FAIL = "bed.lcm.openstack.org/fail"
DURATION = "bed.lcm.openstack.org/duration"


def job(name: str, annotations: Optional[Dict[str, str]] = None, backoff: int = 0) -> Dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "backoffLimit": backoff,
            "template": {
                "metadata": {"annotations": annotations or {}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "registry.invalid/job:1"}],
                },
            },
        },
    }


def deployment(name: str, replicas: int, annotations: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels, "annotations": annotations or {}},
                "spec": {"containers": [{"name": "api", "image": "registry.invalid/api:1"}]},
            },
        },
    }


def create(dyn: dynamic.DynamicClient, namespace: str, body: Dict[str, Any]) -> None:
    dyn.resources.get(api_version=body["apiVersion"], kind=body["kind"]).create(
        body=body, namespace=namespace)


def pods_of(dyn: dynamic.DynamicClient, namespace: str, selector: str) -> list:
    pods = dyn.resources.get(api_version="v1", kind="Pod")
    return pods.get(namespace=namespace, label_selector=selector).to_dict()["items"]


def test_server_reports_the_pinned_version(cluster: bed.Cluster, kubectl) -> None:
    version = json.loads(kubectl("version", "-o", "json").stdout)["serverVersion"]
    if cluster.is_bed:
        assert version["gitVersion"] == bed.bed_var("KUBE_VERSION")
    else:  # an existing cluster: only that it answers with a real version
        assert version["gitVersion"].startswith("v1.")


def test_job_reaches_complete(dyn, namespace) -> None:
    create(dyn, namespace, job("db-sync"))
    done = kube.wait_for(dyn, "batch/v1", "Job", "db-sync", namespace,
                         kube.has_condition("Complete"), timeout=60)
    assert done["status"]["succeeded"] == 1
    assert kube.condition(done, "Failed") is None


def test_deployment_reaches_available_on_fake_nodes(dyn, namespace) -> None:
    create(dyn, namespace, deployment("api", replicas=2))
    dep = kube.wait_for(
        dyn, "apps/v1", "Deployment", "api", namespace,
        lambda d: kube.has_condition("Available")(d)
        and (d.get("status") or {}).get("availableReplicas") == 2,
        timeout=60)
    assert dep["status"]["readyReplicas"] == 2
    nodes = dyn.resources.get(api_version="v1", kind="Node")
    for pod in pods_of(dyn, namespace, "app=api"):
        node = nodes.get(name=pod["spec"]["nodeName"]).to_dict()
        assert node["metadata"]["annotations"]["kwok.x-k8s.io/node"] == "fake"
        assert pod["status"]["phase"] == "Running"


@pytest.mark.bed
def test_job_pod_annotated_to_fail_fails_the_job(dyn, namespace) -> None:
    create(dyn, namespace, job("db-drop", {FAIL: "db-drop: access denied for user keystone"}))
    failed = kube.wait_for(dyn, "batch/v1", "Job", "db-drop", namespace,
                           kube.has_condition("Failed"), timeout=60)
    assert kube.condition(failed, "Failed")["reason"] == "BackoffLimitExceeded"
    assert kube.condition(failed, "Complete") is None
    (pod,) = pods_of(dyn, namespace, "job-name=db-drop")
    assert pod["status"]["phase"] == "Failed"
    terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert terminated["exitCode"] == 1
    assert terminated["message"] == "db-drop: access denied for user keystone"


@pytest.mark.bed
def test_long_running_pod_annotated_to_fail_crash_loops(dyn, namespace) -> None:
    create(dyn, namespace, deployment("api", replicas=1, annotations={FAIL: "bad config"}))
    dep = kube.wait_for(
        dyn, "apps/v1", "Deployment", "api", namespace,
        lambda d: (d.get("status") or {}).get("unavailableReplicas") == 1
        and (d.get("status") or {}).get("updatedReplicas") == 1,
        timeout=60)
    assert not (dep["status"].get("readyReplicas") or 0)
    (pod,) = pods_of(dyn, namespace, "app=api")
    pod = kube.wait_for(dyn, "v1", "Pod", pod["metadata"]["name"], namespace,
                        lambda p: p["status"].get("phase") == "Running", timeout=30)
    waiting = pod["status"]["containerStatuses"][0]["state"]["waiting"]
    assert waiting["reason"] == "CrashLoopBackOff"
    assert kube.condition(pod, "Ready")["status"] == "False"


@pytest.mark.bed
def test_job_duration_annotation_delays_completion(dyn, namespace) -> None:
    """A Job told to run for 4s completes after one told to run for 0s,
    although it was created first: the delay comes from the annotation."""
    create(dyn, namespace, job("slow", {DURATION: "4s"}))
    create(dyn, namespace, job("fast", {DURATION: "0s"}))
    kube.wait_for(dyn, "batch/v1", "Job", "fast", namespace, kube.has_condition("Complete"))
    slow = dyn.resources.get(api_version="batch/v1", kind="Job").get(
        name="slow", namespace=namespace).to_dict()
    assert kube.condition(slow, "Complete") is None
    assert (slow.get("status") or {}).get("active") == 1
    kube.wait_for(dyn, "batch/v1", "Job", "slow", namespace, kube.has_condition("Complete"))


def _anonymous_get(server: str, ca: str, path: str):
    ctx = ssl.create_default_context(cafile=ca) if ca else ssl._create_unverified_context()
    # Strict, as Python 3.13's default is: the bed's CA and certificates carry
    # the extensions a real cluster's do, whatever Python runs this.
    ctx.verify_flags |= ssl.VERIFY_X509_STRICT
    try:
        with urllib.request.urlopen(server + path, context=ctx, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_unauthenticated_request_is_refused(kubeconfig) -> None:
    """Over TLS verified strictly (VERIFY_X509_STRICT), which the bed's certificates pass."""
    cfg = yaml.safe_load(open(kubeconfig, encoding="utf-8"))
    ctx = next(c["context"] for c in cfg["contexts"] if c["name"] == cfg["current-context"])
    cl = next(c["cluster"] for c in cfg["clusters"] if c["name"] == ctx["cluster"])
    status, body = _anonymous_get(cl["server"], cl.get("certificate-authority", ""),
                                  "/api/v1/namespaces/kube-system/secrets")
    assert status in (401, 403), body
    if status == 403:
        assert "system:anonymous" in json.loads(body)["message"]


def test_rbac_refuses_a_service_account_without_roles(dyn, namespace, kubeconfig) -> None:
    sa = dyn.resources.get(api_version="v1", kind="ServiceAccount")
    sa.create(namespace=namespace, body={"apiVersion": "v1", "kind": "ServiceAccount",
                                         "metadata": {"name": "nobody"}})
    token = kclient.CoreV1Api(dyn.client).create_namespaced_service_account_token(
        "nobody", namespace, {"spec": {"expirationSeconds": 600}}).status.token
    base = dyn.client.configuration
    conf = kclient.Configuration()
    conf.host = base.host
    conf.ssl_ca_cert = base.ssl_ca_cert
    conf.verify_ssl = base.verify_ssl
    conf.api_key = {"authorization": "Bearer " + token}
    as_nobody = dynamic.DynamicClient(kclient.ApiClient(conf))
    with pytest.raises(ApiException) as exc:
        as_nobody.resources.get(api_version="v1", kind="Secret").get(namespace=namespace)
    assert exc.value.status == 403
    assert f"system:serviceaccount:{namespace}:nobody" in exc.value.body


def test_garbage_collector_removes_dependents(dyn, namespace) -> None:
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    owner = cms.create(namespace=namespace, body={
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner"}}).to_dict()
    cms.create(namespace=namespace, body={
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "dependent", "ownerReferences": [{
            "apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
            "uid": owner["metadata"]["uid"], "controller": True}]}})
    cms.delete(name="owner", namespace=namespace)
    # The dependent disappears: wait for a DELETED event (or an empty list).
    res = cms
    listed = res.get(namespace=namespace, field_selector="metadata.name=dependent").to_dict()
    if listed["items"]:
        for event in res.watch(namespace=namespace, field_selector="metadata.name=dependent",
                               resource_version=listed["metadata"]["resourceVersion"], timeout=60):
            if event["type"] == "DELETED":
                break
        else:
            pytest.fail("the garbage collector did not delete the dependent ConfigMap in 60s")
    assert not res.get(namespace=namespace, field_selector="metadata.name=dependent").items
