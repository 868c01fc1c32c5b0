"""lcm.openstack.traffic against the real bed, through Ansible: blue/green by Service selector with the
real EndpointSlice controller, an nginx canary Ingress, and OpenShift Route weights (with a stand-in CRD)."""

from __future__ import annotations

import http.server
import os
import subprocess
import threading
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Set, Tuple

import pytest
import yaml
from kubernetes import dynamic
from kubernetes.client.rest import ApiException

from support import kube
from support.ansible import run_module

GROUP = "lifecycle.openstack.org/v1alpha1"
ROUTE_CRD = Path(__file__).parent / "crds" / "route.openshift.io.yaml"
CANARY = "nginx.ingress.kubernetes.io/canary"
WEIGHT = "nginx.ingress.kubernetes.io/canary-weight"


# -- helpers ----------------------------------------------------------------------------------

def res(dyn: dynamic.DynamicClient, api_version: str, kind: str) -> Any:
    return dyn.resources.get(api_version=api_version, kind=kind)


def get(dyn: dynamic.DynamicClient, api_version: str, kind: str, namespace: str, name: str) -> Dict[str, Any]:
    return res(dyn, api_version, kind).get(name=name, namespace=namespace).to_dict()


def items(dyn: dynamic.DynamicClient, api_version: str, kind: str, namespace: str, **kw: Any) -> List[Dict[str, Any]]:
    return res(dyn, api_version, kind).get(namespace=namespace, **kw).to_dict()["items"]


def create(dyn: dynamic.DynamicClient, namespace: str, body: Dict[str, Any]) -> None:
    res(dyn, body["apiVersion"], body["kind"]).create(body=body, namespace=namespace)


def deployment(track: str, replicas: int = 2, annotations: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    labels = {"app": "web", "track": track}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"web-{track}"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels, "annotations": annotations or {}},
                                  "spec": {"containers": [{"name": "api", "image": "registry.invalid/web:1"}]}}}}


def service(name: str, selector: Dict[str, str]) -> Dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"selector": selector, "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}}


def slice_pods(dyn: dynamic.DynamicClient, namespace: str, svc: str = "web") -> Set[Tuple[str, bool]]:
    """(pod, ready) of every endpoint the Service's EndpointSlices list now."""
    out = set()
    for s in items(dyn, "discovery.k8s.io/v1", "EndpointSlice", namespace,
                   label_selector=f"kubernetes.io/service-name={svc}"):
        for ep in s.get("endpoints") or []:
            out.add((ep["targetRef"]["name"], (ep.get("conditions") or {}).get("ready") is not False))
    return out


def wait_slices(dyn: dynamic.DynamicClient, namespace: str, predicate: Callable[[Set[Tuple[str, bool]]], bool],
                svc: str = "web", timeout: float = 60) -> Set[Tuple[str, bool]]:
    """List, then watch from the list's resourceVersion, until the endpoints satisfy `predicate`."""
    r = res(dyn, "discovery.k8s.io/v1", "EndpointSlice")
    selector = f"kubernetes.io/service-name={svc}"
    listed = r.get(namespace=namespace, label_selector=selector).to_dict()
    if predicate(slice_pods(dyn, namespace, svc)):
        return slice_pods(dyn, namespace, svc)
    for _event in r.watch(namespace=namespace, label_selector=selector, timeout=int(timeout),
                          resource_version=listed["metadata"]["resourceVersion"]):
        now = slice_pods(dyn, namespace, svc)
        if predicate(now):
            return now
    raise TimeoutError(f"EndpointSlices of {svc} never satisfied {predicate}: {slice_pods(dyn, namespace, svc)}")


def pods_of(dyn: dynamic.DynamicClient, namespace: str, track: str) -> Set[str]:
    return {p["metadata"]["name"] for p in items(dyn, "v1", "Pod", namespace, label_selector=f"track={track}")}


def phases(dyn: dynamic.DynamicClient, namespace: str) -> Dict[str, Dict[str, Any]]:
    return {p["metadata"]["name"]: p for p in items(dyn, GROUP, "Phase", namespace)}


def history(dyn: dynamic.DynamicClient, namespace: str) -> List[Tuple[str, str, str]]:
    slc = get(dyn, GROUP, "ServiceLifecycle", namespace, "web")
    return [(h["name"], h["type"], h["result"]) for h in slc["status"]["history"]]


def args(namespace: str, action: str, **kw: Any) -> Dict[str, Any]:
    out: Dict[str, Any] = {"action": action, "service": "web", "namespace": namespace}
    out.update(kw)
    return out


def selector_args(namespace: str, action: str, **kw: Any) -> Dict[str, Any]:
    """Blue/green by track (the gate mode, the default, is tested in test_traffic_gate.py)."""
    return args(namespace, action, selector_service="web", selector_mode="track", **kw)


@pytest.fixture
def ns(crds, namespace) -> str:
    return namespace


@pytest.fixture
def bluegreen(dyn: dynamic.DynamicClient, ns: str) -> str:
    """Deployments web-blue and web-green, two pods each; Service web selects blue."""
    for track in ("blue", "green"):
        create(dyn, ns, deployment(track))
    create(dyn, ns, service("web", {"app": "web", "track": "blue"}))
    for track in ("blue", "green"):
        kube.wait_for(dyn, "apps/v1", "Deployment", f"web-{track}", ns, kube.has_condition("Available"))
    blue = pods_of(dyn, ns, "blue")
    wait_slices(dyn, ns, lambda eps: eps == {(p, True) for p in blue})
    return ns


class _Server:
    """An HTTP server on 127.0.0.1 answering `status` to every GET, counting them."""

    def __init__(self, status: int) -> None:
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                server.hits.append(self.path)
                self.send_response(server.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_args: Any) -> None:
                pass
        self.status, self.hits = status, []
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v3"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def http_ok() -> Iterator[_Server]:
    server = _Server(200)
    yield server
    server.close()


@pytest.fixture
def http_500() -> Iterator[_Server]:
    server = _Server(500)
    yield server
    server.close()


@pytest.fixture
def canary_setup(dyn: dynamic.DynamicClient, ns: str) -> str:
    """Primary Ingress web to Service web-blue; Services web-blue and web-green (no pods needed)."""
    create(dyn, ns, service("web-blue", {"app": "web", "track": "blue"}))
    create(dyn, ns, service("web-green", {"app": "web", "track": "green"}))
    create(dyn, ns, {
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "web"},
        "spec": {"ingressClassName": "nginx", "rules": [{"host": "web.example.com", "http": {"paths": [
            {"path": "/", "pathType": "Prefix",
             "backend": {"service": {"name": "web-blue", "port": {"name": "http"}}}}]}}]}})
    return ns


def canary_args(namespace: str, action: str, **kw: Any) -> Dict[str, Any]:
    return args(namespace, action, backend="ingress_canary", ingress="web", canary_service="web-green", **kw)


def run_watching_phases(dyn: dynamic.DynamicClient, namespace: str, module_args: Dict[str, Any],
                        kubeconfig: str) -> Tuple[Dict[str, Any], List[str]]:
    """Run the module while watching the namespace's Phases; return its result and every status.message seen."""
    out: Dict[str, Any] = {}
    thread = threading.Thread(target=lambda: out.update(run_module("traffic", module_args, kubeconfig)))
    r = res(dyn, GROUP, "Phase")
    rv = r.get(namespace=namespace).to_dict()["metadata"]["resourceVersion"]
    thread.start()
    messages: List[str] = []
    while thread.is_alive():
        try:
            for event in r.watch(namespace=namespace, resource_version=rv, timeout=2):
                obj = event["raw_object"]
                rv = obj["metadata"]["resourceVersion"]
                message = (obj.get("status") or {}).get("message")
                if message and (not messages or messages[-1] != message):
                    messages.append(message)
        except ApiException as exc:
            if exc.status != 410:
                raise
    thread.join()
    return out, messages


# -- service_selector -------------------------------------------------------------------------

def test_a_rollout_moves_the_endpoints_to_the_new_track(dyn, kubeconfig, bluegreen) -> None:
    ns = bluegreen
    green = pods_of(dyn, ns, "green")
    result = run_module("traffic", selector_args(ns, "rollout", track="green", min_ready=2,
                                                 target_version="2025.2"), kubeconfig)
    assert result.get("failed") is None, result.get("msg")
    assert result["changed"] is True and result["backend"] == "service_selector"
    assert result["before"] == {"selector": {"app": "web", "track": "blue"}}
    assert result["after"] == {"selector": {"app": "web", "track": "green"}}
    assert sorted(result["endpoints"], key=lambda e: e["pod"]) == [
        {"pod": p, "ready": True, "track": "green"} for p in sorted(green)]
    # When the module returns, the controller's slices list only green pods.
    assert slice_pods(dyn, ns) == {(p, True) for p in green}

    phase = result["phase"]
    assert (phase["type"], phase["state"], phase["target_version"]) == ("trafficrollout", "Succeeded", "2025.2")
    assert phase["message"] == "Service web selects track=green: 2 ready endpoint(s)"
    live = get(dyn, GROUP, "Phase", ns, phase["name"])
    assert live["spec"]["traffic"] == {"backend": "service_selector", "target": "web", "selectorLabel": "track",
                                       "track": "green", "fromTrack": "blue", "minReady": 2}
    svc = get(dyn, "v1", "Service", ns, "web")
    assert svc["spec"]["selector"] == {"app": "web", "track": "green"}
    owners = [m["manager"] for m in svc["metadata"]["managedFields"] if "f:selector" in str(m.get("fieldsV1"))]
    assert owners == ["lcm.openstack-traffic"]
    assert history(dyn, ns) == [(phase["name"], "trafficrollout", "Succeeded")]
    assert get(dyn, GROUP, "ServiceLifecycle", ns, "web")["status"]["state"] == "Operational"

    again = run_module("traffic", selector_args(ns, "rollout", track="green", min_ready=2,
                                                target_version="2025.2"), kubeconfig)
    assert again.get("failed") is None, again.get("msg")
    assert again["changed"] is False and again["phase"] is None
    assert again["message"] == "Service web selects track=green: 2 ready endpoint(s)"
    assert list(phases(dyn, ns)) == [phase["name"]]
    assert len(history(dyn, ns)) == 1


def test_a_drain_without_fallback_empties_the_endpoints(dyn, kubeconfig, bluegreen) -> None:
    ns = bluegreen
    first = run_module("traffic", selector_args(ns, "drain", track="blue"), kubeconfig)
    assert first.get("failed") is None, first.get("msg")
    assert first["changed"] is True and first["endpoints"] == []
    assert first["after"] == {"selector": {"app": "web", "track": "lcm-drained"}}
    assert slice_pods(dyn, ns) == set()
    assert first["phase"]["type"] == "trafficdrain" and first["phase"]["state"] == "Succeeded"
    assert first["phase"]["message"] == "Service web selects track=lcm-drained: drained, no endpoint left"

    again = run_module("traffic", selector_args(ns, "drain", track="blue"), kubeconfig)
    assert again["changed"] is False and again["phase"] is None

    # Back to blue, then the very same drain again: its Phase (same name, since it
    # starts from blue again) is replaced by a new run, not reported as done.
    back = run_module("traffic", selector_args(ns, "rollout", track="blue"), kubeconfig)
    assert back["changed"] is True
    assert get(dyn, GROUP, "Phase", ns, back["phase"]["name"])["spec"]["traffic"]["fromTrack"] == "lcm-drained"
    old_uid = get(dyn, GROUP, "Phase", ns, first["phase"]["name"])["metadata"]["uid"]
    second = run_module("traffic", selector_args(ns, "drain", track="blue"), kubeconfig)
    assert second["changed"] is True and second["phase"]["name"] == first["phase"]["name"]
    assert get(dyn, GROUP, "Phase", ns, first["phase"]["name"])["metadata"]["uid"] != old_uid
    assert sorted(phases(dyn, ns)) == sorted([first["phase"]["name"], back["phase"]["name"]])
    assert [(t, r) for _n, t, r in history(dyn, ns)] == [
        ("trafficdrain", "Succeeded"), ("trafficrollout", "Succeeded")]


def test_a_drain_to_a_fallback_keeps_serving(dyn, kubeconfig, bluegreen) -> None:
    ns = bluegreen
    green = pods_of(dyn, ns, "green")
    result = run_module("traffic", selector_args(ns, "drain", track="blue", fallback_track="green"), kubeconfig)
    assert result.get("failed") is None, result.get("msg")
    assert slice_pods(dyn, ns) == {(p, True) for p in green}
    assert result["phase"]["message"] == "Service web selects track=green: 2 ready endpoint(s)"


@pytest.mark.bed
def test_a_rollout_to_a_track_without_ready_pods_times_out_and_goes_back(dyn, kubeconfig, bluegreen) -> None:
    ns = bluegreen
    blue = pods_of(dyn, ns, "blue")
    result = run_module("traffic", selector_args(ns, "rollout", track="purple", timeout=3), kubeconfig)
    assert result["failed"] is True and result["changed"] is True
    assert result["msg"] == ("timed out after 3s waiting for the EndpointSlices of Service web (selects "
                             "track=purple): no ready endpoint: pods with track=purple: 0 found; the selector "
                             "is back to track=blue")
    assert result["phase"]["state"] == "Failed" and result["phase"]["reason"] == "Timeout"
    assert result["phase"]["failed_object"] == "Service/web"
    assert get(dyn, "v1", "Service", ns, "web")["spec"]["selector"] == {"app": "web", "track": "blue"}
    wait_slices(dyn, ns, lambda eps: eps == {(p, True) for p in blue})
    assert history(dyn, ns)[-1][2] == "Failed"

    # Pods that exist but never get Ready are named, with why.
    create(dyn, ns, deployment("red", replicas=1, annotations={"bed.lcm.openstack.org/fail": "no database"}))
    red = kube.wait_for(dyn, "apps/v1", "Deployment", "web-red", ns,
                        lambda d: (d.get("status") or {}).get("replicas") == 1)
    assert red
    result = run_module("traffic", selector_args(ns, "rollout", track="red", timeout=3), kubeconfig)
    assert result["failed"] is True
    (pod,) = pods_of(dyn, ns, "red")
    assert f"no ready endpoint: pods with track=red: 1 found, 1 not Ready (pod {pod}: " in result["msg"]
    assert result["msg"].endswith("; the selector is back to track=blue")


def test_check_mode_changes_nothing(dyn, kubeconfig, bluegreen) -> None:
    ns = bluegreen
    result = run_module("traffic", selector_args(ns, "rollout", track="green"), kubeconfig, check=True, diff=True)
    assert result.get("failed") is None, result.get("msg")
    assert result["changed"] is True and result["phase"]["state"] == "Pending"
    assert result["phase"]["name"].startswith("web-trafficrollout-")
    assert result["diff"]["before"] == "selector:\n  app: web\n  track: blue\n"
    assert result["diff"]["after"] == "selector:\n  app: web\n  track: green\n"
    assert phases(dyn, ns) == {}
    svc = get(dyn, "v1", "Service", ns, "web")
    assert svc["spec"]["selector"] == {"app": "web", "track": "blue"}
    assert all(m["manager"] != "lcm.openstack-traffic" for m in svc["metadata"]["managedFields"])
    assert {p for p, _r in slice_pods(dyn, ns)} == pods_of(dyn, ns, "blue")
    # A value the apiserver would refuse is refused in check mode too.
    bad = run_module("traffic", selector_args(ns, "rollout", track="not a label value"), kubeconfig, check=True)
    assert bad["failed"] is True and "the apiserver refused Service web" in bad["msg"]


HELM_CHART = {
    "Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\n",
    "values.yaml": "portName: http\n",
    "templates/service.yaml": ("apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n"
                               "  selector: {app: web}\n"
                               "  ports:\n    - {name: {{ .Values.portName }}, port: 80, targetPort: 8080}\n"),
}


@pytest.mark.parametrize("major", ["3", "4"])
def test_what_a_helm_upgrade_does_to_the_selector(dyn, kubeconfig, ns, tmp_path, major) -> None:
    """The Service's selector is an atomic map: the traffic manager owns all of it once it changed one key."""
    binary = os.environ.get(f"HELM{major}_BIN")
    assert binary, f"HELM{major}_BIN must name the Helm {major} binary (make test sets it)"
    for rel, text in HELM_CHART.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    env = dict(os.environ, KUBECONFIG=kubeconfig)

    def helm(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([binary, *argv, "-n", ns], env=env, capture_output=True, text=True, check=False)
    assert helm("install", "web", str(tmp_path)).returncode == 0
    drained = run_module("traffic", selector_args(ns, "drain"), kubeconfig)
    assert drained.get("failed") is None, drained.get("msg")
    want = {"app": "web", "track": "lcm-drained"}

    upgrade = helm("upgrade", "web", str(tmp_path), "--set", "portName=http2")
    svc = get(dyn, "v1", "Service", ns, "web")
    assert svc["spec"]["selector"] == want  # neither Helm takes the key away
    if major == "3":  # three-way merge: the chart's selector did not change, so it is not patched
        assert upgrade.returncode == 0, upgrade.stderr
        assert svc["spec"]["ports"][0]["name"] == "http2"
    else:  # server-side apply: the whole selector belongs to the traffic manager, and Helm 4 does not force
        assert upgrade.returncode != 0
        assert 'conflict with "lcm.openstack-traffic"' in upgrade.stderr and ".spec.selector" in upgrade.stderr
        assert svc["spec"]["ports"][0]["name"] == "http"
        client_side = helm("upgrade", "web", str(tmp_path), "--set", "portName=http2", "--server-side=false")
        assert client_side.returncode == 0, client_side.stderr
        svc = get(dyn, "v1", "Service", ns, "web")
        assert svc["spec"]["selector"] == want and svc["spec"]["ports"][0]["name"] == "http2"
        # helm_release's server_side=false (what the flow roles pass) does the same
        release = run_module("helm_release", {"name": "web", "namespace": ns, "chart": str(tmp_path),
                                              "values": {"portName": "http3"}, "server_side": False,
                                              "binary_path": binary}, kubeconfig)
        assert release.get("failed") is None, release.get("msg")
        assert "--server-side=false" in release["command"]
        svc = get(dyn, "v1", "Service", ns, "web")
        assert svc["spec"]["selector"] == want and svc["spec"]["ports"][0]["name"] == "http3"
    again = run_module("traffic", selector_args(ns, "drain"), kubeconfig)
    assert again["changed"] is False


# -- ingress_canary ---------------------------------------------------------------------------

def test_an_ingress_canary_steps_through_the_weights(dyn, kubeconfig, canary_setup, http_ok) -> None:
    ns = canary_setup
    result, messages = run_watching_phases(
        dyn, ns, canary_args(ns, "rollout", pause_seconds=1, check={"url": http_ok.url}), kubeconfig)
    assert result.get("failed") is None, result.get("msg")
    assert result["changed"] is True and result["steps_done"] == [10, 50, 100]
    assert (result["before"], result["after"]) == ({"weight": 0, "canary_service": "web-green"},
                                                   {"weight": 100, "canary_service": "web-green"})
    assert http_ok.hits == ["/v3"] * 3
    for step in ("weight 10% (step 1/3)", "weight 50% (step 2/3)", "weight 100% (step 3/3)"):
        assert f"{step}, pausing 1s before the check" in messages
        assert f"{step}, checking: GET {http_ok.url} expects 200" in messages
    assert messages[-1] == "Ingress web-canary sends 100% to Service web-green after 3 step(s)"

    canary = get(dyn, "networking.k8s.io/v1", "Ingress", ns, "web-canary")
    assert canary["metadata"]["annotations"][CANARY] == "true"
    assert canary["metadata"]["annotations"][WEIGHT] == "100"
    assert canary["metadata"]["labels"]["lifecycle.openstack.org/service"] == "web"
    assert "ownerReferences" not in canary["metadata"]  # it outlives the Phases
    assert canary["spec"]["ingressClassName"] == "nginx"
    assert canary["spec"]["rules"] == [{"host": "web.example.com", "http": {"paths": [
        {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web-green", "port": {"name": "http"}}}}]}}]
    primary = get(dyn, "networking.k8s.io/v1", "Ingress", ns, "web")
    assert primary["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"] == "web-blue"
    phase = get(dyn, GROUP, "Phase", ns, result["phase"]["name"])
    assert phase["spec"]["traffic"] == {"backend": "ingress_canary", "target": "web", "canaryService": "web-green",
                                        "fromWeight": 0, "steps": [10, 50, 100], "pauseSeconds": 1,
                                        "check": f"GET {http_ok.url} expects 200"}

    again = run_module("traffic", canary_args(ns, "rollout", pause_seconds=1, check={"url": http_ok.url}),
                       kubeconfig)
    assert again["changed"] is False and again["phase"] is None and len(http_ok.hits) == 3
    assert list(phases(dyn, ns)) == [result["phase"]["name"]]

    drained = run_module("traffic", canary_args(ns, "drain", drain_grace_seconds=0), kubeconfig)
    assert drained.get("failed") is None, drained.get("msg")
    assert drained["steps_done"] == [0] and drained["phase"]["type"] == "trafficdrain"
    canary = get(dyn, "networking.k8s.io/v1", "Ingress", ns, "web-canary")
    assert canary["metadata"]["annotations"][WEIGHT] == "0"
    assert canary["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"] == "web-green"
    assert [(t, r) for _n, t, r in history(dyn, ns)] == [
        ("trafficrollout", "Succeeded"), ("trafficdrain", "Succeeded")]


def test_a_failing_url_check_sends_the_weight_back_to_zero(dyn, kubeconfig, canary_setup, http_500) -> None:
    ns = canary_setup
    result = run_module("traffic", canary_args(ns, "rollout", check={"url": http_500.url}), kubeconfig)
    assert result["failed"] is True and result["changed"] is True
    assert result["msg"] == (f"check failed at weight 10% (step 1/3): GET {http_500.url} returned 500, "
                             "expected 200; weight set back to 0%")
    assert result["steps_done"] == [10] and result["after"]["weight"] == 0
    assert get(dyn, "networking.k8s.io/v1", "Ingress", ns, "web-canary")["metadata"]["annotations"][WEIGHT] == "0"
    phase = get(dyn, GROUP, "Phase", ns, result["phase"]["name"])
    assert phase["status"]["state"] == "Failed" and phase["status"]["reason"] == "CheckFailed"
    assert phase["status"]["failedObject"] == "Ingress/web-canary"
    assert kube.condition(phase, "Failed")["reason"] == "CheckFailed"
    assert history(dyn, ns)[-1][1:] == ("trafficrollout", "Failed")
    assert http_500.hits == ["/v3"]


TEST_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-smoke"},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "smoke", "image": "registry.invalid/smoke:1"}]}}


@pytest.mark.bed
def test_a_test_phase_check_runs_inside_the_rollout(dyn, kubeconfig, canary_setup) -> None:
    ns = canary_setup
    check = {"test_phase": True, "source": {"manifests": [TEST_POD]}, "timeout": 60}
    result = run_module("traffic", canary_args(ns, "rollout", steps=[50, 100], check=check), kubeconfig)
    assert result.get("failed") is None, result.get("msg")
    assert result["steps_done"] == [50, 100]
    by_type: Dict[str, List[Dict[str, Any]]] = {}
    for p in phases(dyn, ns).values():
        by_type.setdefault(p["spec"]["type"], []).append(p)
    assert len(by_type["test"]) == 2  # one test Phase per step, each a new run
    assert {p["status"]["state"] for p in by_type["test"]} == {"Succeeded"}
    assert by_type["trafficrollout"][0]["status"]["state"] == "Succeeded"

    failing = dict(TEST_POD, metadata={"name": "web-smoke", "annotations": {
        "bed.lcm.openstack.org/fail": "smoke: 3 of 12 API calls failed"}})
    check["source"] = {"manifests": [failing]}
    drained = run_module("traffic", canary_args(ns, "drain", drain_grace_seconds=0), kubeconfig)
    assert drained["changed"] is True
    result = run_module("traffic", canary_args(ns, "rollout", steps=[50, 100], check=check), kubeconfig)
    assert result["failed"] is True
    assert result["msg"].startswith("check failed at weight 50% (step 1/2): Pod web-smoke failed")
    assert "smoke: 3 of 12 API calls failed" in result["msg"]
    assert result["msg"].endswith("weight set back to 0%")
    assert get(dyn, "networking.k8s.io/v1", "Ingress", ns, "web-canary")["metadata"]["annotations"][WEIGHT] == "0"


def test_check_mode_creates_no_canary(dyn, kubeconfig, canary_setup) -> None:
    ns = canary_setup
    result = run_module("traffic", canary_args(ns, "rollout"), kubeconfig, check=True, diff=True)
    assert result.get("failed") is None, result.get("msg")
    assert result["changed"] is True and result["steps_done"] == []
    assert "weight: 100" in result["diff"]["after"]
    assert [i["metadata"]["name"] for i in items(dyn, "networking.k8s.io/v1", "Ingress", ns)] == ["web"]
    assert phases(dyn, ns) == {}


# -- openshift_route ----------------------------------------------------------------------------

def _crd_gone(dyn: dynamic.DynamicClient, name: str, timeout: int = 60) -> None:
    crds = res(dyn, "apiextensions.k8s.io/v1", "CustomResourceDefinition")
    try:
        crds.delete(name=name)
    except ApiException as exc:
        if exc.status != 404:
            raise
    listed = crds.get(field_selector=f"metadata.name={name}").to_dict()
    if listed["items"]:
        for event in crds.watch(field_selector=f"metadata.name={name}", timeout=timeout,
                                resource_version=listed["metadata"]["resourceVersion"]):
            if event["type"] == "DELETED":
                break
    dyn.resources.invalidate_cache()


@pytest.fixture
def route_crd(dyn: dynamic.DynamicClient) -> Iterator[None]:
    body = yaml.safe_load(ROUTE_CRD.read_text())
    crds = res(dyn, "apiextensions.k8s.io/v1", "CustomResourceDefinition")
    crds.server_side_apply(body=body, name=body["metadata"]["name"], field_manager="lcm.openstack-tests",
                           force_conflicts=True)
    kube.wait_for(dyn, "apiextensions.k8s.io/v1", "CustomResourceDefinition", body["metadata"]["name"], None,
                  kube.has_condition("Established"))
    dyn.resources.invalidate_cache()
    yield
    _crd_gone(dyn, body["metadata"]["name"])


@pytest.fixture
def no_route_crd(dyn: dynamic.DynamicClient) -> None:
    _crd_gone(dyn, yaml.safe_load(ROUTE_CRD.read_text())["metadata"]["name"])


def route_args(namespace: str, action: str, **kw: Any) -> Dict[str, Any]:
    return args(namespace, action, backend="openshift_route", route="web", **kw)


def test_route_weights(dyn, kubeconfig, ns, route_crd) -> None:
    create(dyn, ns, {"apiVersion": "route.openshift.io/v1", "kind": "Route", "metadata": {"name": "web"},
                     "spec": {"host": "web.apps.example.com", "to": {"kind": "Service", "name": "web-blue",
                                                                     "weight": 100}}})
    result = run_module("traffic", route_args(ns, "rollout", canary_service="web-green", steps=[25, 100]),
                        kubeconfig)
    assert result.get("failed") is None, result.get("msg")
    assert result["steps_done"] == [25, 100] and result["phase"]["state"] == "Succeeded"
    assert result["phase"]["message"] == ("Route web sends 100% to Service web-green, 0% to Service web-blue "
                                          "after 2 step(s)")
    spec = get(dyn, "route.openshift.io/v1", "Route", ns, "web")["spec"]
    assert spec["to"] == {"kind": "Service", "name": "web-blue", "weight": 0}
    assert spec["alternateBackends"] == [{"kind": "Service", "name": "web-green", "weight": 100}]
    assert spec["host"] == "web.apps.example.com"

    again = run_module("traffic", route_args(ns, "rollout", canary_service="web-green", steps=[25, 100]),
                       kubeconfig)
    assert again["changed"] is False

    drained = run_module("traffic", route_args(ns, "drain", canary_service="web-green", drain_grace_seconds=0),
                         kubeconfig)
    assert drained.get("failed") is None, drained.get("msg")
    assert (drained["before"]["weight"], drained["after"]["weight"]) == (100, 0)
    spec = get(dyn, "route.openshift.io/v1", "Route", ns, "web")["spec"]
    assert spec["to"]["weight"] == 100 and spec["alternateBackends"][0]["weight"] == 0
    assert [(t, r) for _n, t, r in history(dyn, ns)] == [
        ("trafficrollout", "Succeeded"), ("trafficdrain", "Succeeded")]


def test_without_the_route_api_the_error_names_the_fix(dyn, kubeconfig, ns, no_route_crd) -> None:
    result = run_module("traffic", route_args(ns, "rollout", canary_service="web-green"), kubeconfig)
    assert result["failed"] is True
    assert result["msg"].startswith("the cluster does not serve Route in route.openshift.io/v1; the "
                                    "openshift_route backend needs OpenShift's Route API")
    assert "install the Route CRD" in result["msg"]
    assert phases(dyn, ns) == {}


def test_the_module_refuses_incomplete_arguments(kubeconfig, ns) -> None:
    result = run_module("traffic", args(ns, "rollout", backend="ingress_canary"), kubeconfig)
    assert result["failed"] is True and "ingress" in result["msg"]
    result = run_module("traffic", selector_args(ns, "rollout"), kubeconfig)
    assert result["failed"] is True
    assert result["msg"].startswith("track is required to roll out with backend service_selector")
