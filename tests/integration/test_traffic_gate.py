"""lcm.openstack.traffic's gate mode on the bed, on keystone-api as openstack-helm's keystone chart renders
it (its api Deployment and Service, rendered by helm template from the shared charts): drain and rollout
with only the labels the chart renders, a Helm upgrade of the Service between them (Helm 3, and Helm 4 run
client-side as the roles run it), a rollout whose pods never get Ready, and a rollout that ends the service's
flow in its own module run (end_flow) or, failing, leaves it running."""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any, Callable, Dict, Iterator, List, Set, Tuple

import pytest
import yaml
from kubernetes import dynamic
from kubernetes.dynamic.exceptions import ConflictError

from ansible_collections.lcm.openstack.plugins.module_utils.kube import pod_config
from support import kube
from support.ansible import run_module

CHARTS = kube.ROOT.parent / "shared" / "charts" / "openstack-helm"
GATE = "lifecycle.openstack.org/traffic"
GROUP = "lifecycle.openstack.org/v1alpha1"
# The bed's nodes and kwok: schedule on a label every node has, and run no
# kubernetes-entrypoint dependencies (the api's jobs are not part of this test).
BED_VALUES = ["--set", "labels.api.node_selector_key=kubernetes.io/os", "--set", "labels.api.node_selector_value=linux",
              "--set", "dependencies.static.api=null", "--set", "pod.replicas.api=2"]


def helm_bin(major: str) -> str:
    binary = os.environ.get(f"HELM{major}_BIN")
    assert binary, f"HELM{major}_BIN must name the Helm {major} binary (make test sets it)"
    return binary


@pytest.fixture(scope="session")
def render(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Dict[str, Dict[str, Any]]]:
    """render(*helm args) -> {kind: object}: the Service, Deployment and ServiceAccount of keystone's
    service-api.yaml and deployment-api.yaml."""
    assert (CHARTS / "keystone").is_dir(), f"the shared openstack-helm charts are expected in {CHARTS}"
    tmp = tmp_path_factory.mktemp("charts")
    for chart in ("helm-toolkit", "keystone"):
        shutil.copytree(CHARTS / chart, tmp / chart)
    helm = helm_bin("3")
    subprocess.run([helm, "dependency", "build", str(tmp / "keystone")], check=True, capture_output=True)

    def go(*extra: str) -> Dict[str, Dict[str, Any]]:
        out = subprocess.run([helm, "template", "keystone", str(tmp / "keystone"), "--namespace", "openstack",
                              "--show-only", "templates/service-api.yaml",
                              "--show-only", "templates/deployment-api.yaml", *BED_VALUES, *extra],
                             check=True, capture_output=True, text=True).stdout
        return {d["kind"]: d for d in yaml.safe_load_all(out) if d and d["kind"] in ("Service", "Deployment", "ServiceAccount")}
    return go


def create(dyn: dynamic.DynamicClient, namespace: str, body: Dict[str, Any]) -> None:
    """Create one rendered object; a workload with the ConfigMaps and Secrets its pods
    mount, empty (the bed, as a kubelet, starts no pod whose volume is missing)."""
    for kind, name, _how in pod_config.required(body):
        try:
            dyn.resources.get(api_version="v1", kind=kind).create(
                body={"apiVersion": "v1", "kind": kind, "metadata": {"name": name}}, namespace=namespace)
        except ConflictError:
            pass
    body = dict(body, metadata=dict(body["metadata"], namespace=namespace))
    dyn.resources.get(api_version=body["apiVersion"], kind=body["kind"]).create(body=body, namespace=namespace)


def service(dyn: dynamic.DynamicClient, namespace: str) -> Dict[str, Any]:
    return dyn.resources.get(api_version="v1", kind="Service").get(name="keystone-api",
                                                                   namespace=namespace).to_dict()


def endpoints(dyn: dynamic.DynamicClient, namespace: str) -> Set[Tuple[str, bool]]:
    res = dyn.resources.get(api_version="discovery.k8s.io/v1", kind="EndpointSlice")
    out = set()
    for s in res.get(namespace=namespace, label_selector="kubernetes.io/service-name=keystone-api").to_dict()["items"]:
        for ep in s.get("endpoints") or []:
            out.add((ep["targetRef"]["name"], (ep.get("conditions") or {}).get("ready") is not False))
    return out


def api_pods(dyn: dynamic.DynamicClient, namespace: str) -> Set[str]:
    pods = dyn.resources.get(api_version="v1", kind="Pod").get(
        namespace=namespace, label_selector="application=keystone,component=api").to_dict()["items"]
    return {p["metadata"]["name"] for p in pods}


def phases(dyn: dynamic.DynamicClient, namespace: str) -> List[Dict[str, Any]]:
    return dyn.resources.get(api_version=GROUP, kind="Phase").get(namespace=namespace).to_dict()["items"]


def traffic(namespace: str, action: str, **kw: Any) -> Dict[str, Any]:
    return dict({"action": action, "service": "keystone", "namespace": namespace,
                 "selector_service": "keystone-api"}, **kw)


@pytest.fixture
def keystone_api(dyn: dynamic.DynamicClient, crds: None, namespace: str,
                 render: Callable[..., Dict[str, Dict[str, Any]]]) -> Iterator[Tuple[str, Dict[str, Any]]]:
    """The chart's keystone-api Deployment (2 replicas) Available in a fresh namespace; the rendered objects."""
    objs = render()
    create(dyn, namespace, objs["ServiceAccount"])
    create(dyn, namespace, objs["Deployment"])
    kube.wait_for(dyn, "apps/v1", "Deployment", "keystone-api", namespace, kube.has_condition("Available"))
    yield namespace, objs


def wait_endpoints(dyn: dynamic.DynamicClient, namespace: str, want: Set[Tuple[str, bool]]) -> None:
    """List, then watch the Service's EndpointSlices from the list's resourceVersion, until they list `want`."""
    res = dyn.resources.get(api_version="discovery.k8s.io/v1", kind="EndpointSlice")
    selector = "kubernetes.io/service-name=keystone-api"
    rv = res.get(namespace=namespace, label_selector=selector).to_dict()["metadata"]["resourceVersion"]
    if endpoints(dyn, namespace) == want:
        return
    for _event in res.watch(namespace=namespace, label_selector=selector, resource_version=rv, timeout=60):
        if endpoints(dyn, namespace) == want:
            return
    raise TimeoutError(f"the endpoints of keystone-api never became {want}: {endpoints(dyn, namespace)}")


def test_drain_and_rollout_on_the_chart_keystone_api(dyn, kubeconfig, keystone_api) -> None:
    ns, objs = keystone_api
    own = objs["Service"]["spec"]["selector"]
    assert "track" not in own and GATE not in own
    create(dyn, ns, objs["Service"])
    pods = api_pods(dyn, ns)
    assert len(pods) == 2
    wait_endpoints(dyn, ns, {(p, True) for p in pods})

    # Blue/green by track cannot work on this chart: said at once, nothing written.
    track = run_module("traffic", traffic(ns, "rollout", selector_mode="track", track="2025.2"), kubeconfig)
    assert track["failed"] is True and track["msg"].startswith(
        "selector_mode track cannot work on Service keystone-api: none of the 2 pod(s) it selects")
    assert phases(dyn, ns) == [] and service(dyn, ns)["spec"]["selector"] == own

    drain = run_module("traffic", traffic(ns, "drain"), kubeconfig)
    assert drain.get("failed") is None, drain.get("msg")
    assert drain["changed"] is True and drain["endpoints"] == []
    assert drain["after"] == {"selector": dict(own, **{GATE: "drained"})}
    assert service(dyn, ns)["spec"]["selector"] == dict(own, **{GATE: "drained"})
    assert endpoints(dyn, ns) == set()
    assert drain["phase"]["state"] == "Succeeded"
    assert drain["phase"]["message"] == f"Service keystone-api is gated ({GATE}=drained): drained, no endpoint left"
    assert run_module("traffic", traffic(ns, "drain"), kubeconfig)["changed"] is False

    rollout = run_module("traffic", traffic(ns, "rollout", min_ready=2, target_version="2025.2"), kubeconfig)
    assert rollout.get("failed") is None, rollout.get("msg")
    assert rollout["changed"] is True and rollout["after"] == {"selector": own}
    assert service(dyn, ns)["spec"]["selector"] == own  # exactly the chart's selector again
    assert sorted(rollout["endpoints"], key=lambda e: e["pod"]) == [
        {"pod": p, "ready": True} for p in sorted(pods)]
    assert endpoints(dyn, ns) == {(p, True) for p in pods}
    assert rollout["phase"]["message"] == "Service keystone-api selects the release's pods: 2 ready endpoint(s)"
    again = run_module("traffic", traffic(ns, "rollout", min_ready=2, target_version="2025.2"), kubeconfig)
    assert again["changed"] is False and again["phase"] is None
    assert sorted(p["spec"]["type"] for p in phases(dyn, ns)) == ["trafficdrain", "trafficrollout"]


def flow_record(dyn: dynamic.DynamicClient, namespace: str) -> Dict[str, Any]:
    """keystone's flow, as its ServiceLifecycle records it."""
    res = dyn.resources.get(api_version=GROUP, kind="ServiceLifecycle")
    return res.get(name="keystone", namespace=namespace).to_dict()["status"]["flow"]


def test_a_rollout_with_end_flow_ends_the_flow_once_and_a_rerun_changes_nothing(dyn, kubeconfig, keystone_api) -> None:
    ns, objs = keystone_api
    create(dyn, ns, objs["Service"])
    started = run_module("service_lifecycle", {"service": "keystone", "namespace": ns, "flow": {
        "name": "update", "action": "start", "target_version": "2025.2"}}, kubeconfig)
    assert started.get("failed") is None, started.get("msg")
    drain = run_module("traffic", traffic(ns, "drain"), kubeconfig)
    assert drain.get("failed") is None, drain.get("msg")
    end = {"name": "update", "reason": "reopened"}

    check = run_module("traffic", traffic(ns, "rollout", min_ready=2, end_flow=end), kubeconfig, check=True)
    assert check.get("failed") is None, check.get("msg")
    assert check["lifecycle"]["flow"]["state"] == "Succeeded" and "lease" not in check
    assert flow_record(dyn, ns)["state"] == "Running" and GATE in service(dyn, ns)["spec"]["selector"]

    rollout = run_module("traffic", traffic(ns, "rollout", min_ready=2, target_version="2025.2", end_flow=end),
                         kubeconfig)
    assert rollout.get("failed") is None, rollout.get("msg")
    assert rollout["changed"] is True and rollout["phase"]["state"] == "Succeeded"
    assert service(dyn, ns)["spec"]["selector"] == objs["Service"]["spec"]["selector"]
    recorded = flow_record(dyn, ns)
    assert (recorded["state"], recorded["message"]) == ("Succeeded", "reopened") and recorded["completedAt"]
    assert rollout["lifecycle"]["state"] == "Operational" and rollout["lifecycle"]["flow"]["state"] == "Succeeded"
    report = rollout["report"].splitlines()
    assert report[0] == f"keystone ({ns}): update flow Succeeded, version 2025.2; service Operational"
    assert [row.split()[:2] for row in report[2:4]] == [["trafficdrain", "Succeeded"], ["trafficrollout", "Succeeded"]]
    # Each module run here is a playbook run of its own: the start's run held the Lease, and gave it back
    # when it ended. Inside one flow playbook, the rollout gives it back (tests/integration/test_flows.py).
    assert rollout["lease"] == "not held by this run"

    # A re-run after an interruption: the traffic is rolled out, the flow ended; no error, no change.
    again = run_module("traffic", traffic(ns, "rollout", min_ready=2, target_version="2025.2", end_flow=end),
                       kubeconfig)
    assert again.get("failed") is None, again.get("msg")
    assert again["changed"] is False and again["phase"] is None and again["report"] == rollout["report"]
    assert flow_record(dyn, ns)["completedAt"] == recorded["completedAt"]


@pytest.mark.parametrize("major", ["3", "4"])
def test_a_helm_upgrade_between_drain_and_rollout_keeps_the_gate(dyn, kubeconfig, keystone_api, render,
                                                                 tmp_path, major) -> None:
    """The Service is the chart's, installed by Helm; the upgrade drops the chart's app.kubernetes.io keys
    from the selector (pod.labels.include_app_kubernetes_io=false). Helm's client-side three-way merge
    applies that and leaves the gate key alone; the rollout restores the upgraded selector."""
    ns, objs = keystone_api
    pods = api_pods(dyn, ns)
    upgraded = render("--set", "pod.labels.include_app_kubernetes_io=false")["Service"]
    chart = tmp_path / "keystone-api"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: keystone-api\nversion: 0.1.0\n")

    def helm(svc: Dict[str, Any], command: str) -> None:
        (chart / "templates" / "service-api.yaml").write_text(yaml.safe_dump(svc))
        argv = [helm_bin(major), command, "keystone", str(chart), "-n", ns]
        if major == "4":
            argv.append("--server-side=false")  # as the roles run Helm 4 (helm_release server_side: false)
        done = subprocess.run(argv, env=dict(os.environ, KUBECONFIG=kubeconfig), capture_output=True, text=True,
                              check=False)
        assert done.returncode == 0, done.stderr

    helm(objs["Service"], "install")
    wait_endpoints(dyn, ns, {(p, True) for p in pods})
    drain = run_module("traffic", traffic(ns, "drain"), kubeconfig)
    assert drain.get("failed") is None, drain.get("msg")

    helm(upgraded, "upgrade")
    want = upgraded["spec"]["selector"]
    assert "app.kubernetes.io/name" not in want
    assert service(dyn, ns)["spec"]["selector"] == dict(want, **{GATE: "drained"})
    assert endpoints(dyn, ns) == set()  # still drained

    rollout = run_module("traffic", traffic(ns, "rollout", min_ready=2), kubeconfig)
    assert rollout.get("failed") is None, rollout.get("msg")
    assert service(dyn, ns)["spec"]["selector"] == want
    assert endpoints(dyn, ns) == {(p, True) for p in pods}

    # A later upgrade back to the chart's full selector goes through too: Helm owns the keys it renders.
    helm(objs["Service"], "upgrade")
    assert service(dyn, ns)["spec"]["selector"] == objs["Service"]["spec"]["selector"]


@pytest.mark.bed
def test_a_rollout_whose_pods_never_get_ready_leaves_the_gate_open(dyn, kubeconfig, crds, namespace, render):
    ns = namespace
    objs = render("--set", "pod.replicas.api=1")
    deploy = objs["Deployment"]
    deploy["spec"]["template"]["metadata"]["annotations"]["bed.lcm.openstack.org/fail"] = "no database"
    create(dyn, ns, objs["ServiceAccount"])
    create(dyn, ns, deploy)
    create(dyn, ns, objs["Service"])
    own = objs["Service"]["spec"]["selector"]
    drain = run_module("traffic", traffic(ns, "drain"), kubeconfig)
    assert drain.get("failed") is None, drain.get("msg")
    kube.wait_for(dyn, "apps/v1", "Deployment", "keystone-api", ns,
                  lambda d: (d.get("status") or {}).get("replicas") == 1)
    (pod,) = api_pods(dyn, ns)

    started = run_module("service_lifecycle", {"service": "keystone", "namespace": ns, "flow": {
        "name": "update", "action": "start", "target_version": "2025.2"}}, kubeconfig)
    assert started.get("failed") is None, started.get("msg")

    # The flow's last rollout fails: the flow is not ended, its rescue records the failure.
    result = run_module("traffic", traffic(ns, "rollout", timeout=3, end_flow={"name": "update"}), kubeconfig)
    assert result["failed"] is True and result["phase"]["reason"] == "Timeout"
    assert "lifecycle" not in result and flow_record(dyn, ns)["state"] == "Running"
    assert f"no ready endpoint: pods with {','.join(f'{k}={v}' for k, v in sorted(own.items()))}: 1 found, " \
           f"1 not Ready (pod {pod}: " in result["msg"]
    assert result["msg"].endswith("; the gate stays open: the Service selects the release's pods, which get "
                                  "traffic once Ready")
    assert service(dyn, ns)["spec"]["selector"] == own  # never back to selecting nothing
