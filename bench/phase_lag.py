#!/usr/bin/env python3
"""How long after a phase's last Job completes does the waiting code return?

For each run, in a fresh namespace, an observer watches the Jobs and notes
when each one is first seen Complete. Then three waiters run on an identical
one-Job phase (the Job runs for 2 s on the bed's fake kubelet):

  engine        lcm.openstack's phase engine, called in-process
  phase         the lcm.openstack.phase module, through `ansible`
  k8s           kubernetes.core.k8s with wait: true, wait_condition Complete

lag = when the waiter returned - when the observer saw the last Job Complete.
Also reported: the same lag against the Complete condition's
lastTransitionTime (whole seconds, so it reads up to 1 s high), and the
apiserver requests each waiter made: counted in the client for the engine,
and read from the apiserver's /metrics (apiserver_request_total) for the
Phase and ServiceLifecycle resources, which nothing else touches.

Usage: KUBECONFIG=... bench/phase_lag.py [--runs N]   (make bench-phase-lag)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build" / "collections"))

from kubernetes import config, dynamic, watch  # noqa: E402

from ansible_collections.lcm.openstack.plugins.module_utils.phase.runner import PhaseRunner  # noqa: E402
from ansible_collections.lcm.openstack.plugins.module_utils.phase.spec import PhaseRequest, Source  # noqa: E402

ANSIBLE = str(Path(sys.executable).parent / "ansible")
GROUP = "lifecycle.openstack.org"


def job(name: str, duration: str = "2s") -> Dict[str, Any]:
    """A Job whose pod runs `duration` (a Go duration: 2s, 2250ms) on the bed's fake kubelet."""
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"backoffLimit": 0, "template": {
                "metadata": {"annotations": {"bed.lcm.openstack.org/duration": duration}},
                "spec": {"restartPolicy": "Never",
                         "containers": [{"name": "main", "image": "registry.invalid/bench:1"}]}}}}


class Observer(threading.Thread):
    """Notes the wall time at which each Job of a namespace is first seen
    (created), and first seen Complete (seen)."""

    def __init__(self, dyn: dynamic.DynamicClient, namespace: str) -> None:
        super().__init__(daemon=True)
        self.dyn, self.namespace = dyn, namespace
        self.created: Dict[str, float] = {}
        self.seen: Dict[str, float] = {}
        self.transition: Dict[str, float] = {}
        self.ready = threading.Event()
        self.stopping = threading.Event()
        self.watcher = watch.Watch()

    def run(self) -> None:
        jobs = self.dyn.resources.get(api_version="batch/v1", kind="Job")
        first = True
        while not self.stopping.is_set():  # a watch ends after its timeout: list and watch again
            try:
                listed = jobs.get(namespace=self.namespace).to_dict()
                for obj in listed["items"] if not first else []:
                    self._note(obj)
                if first:
                    first = False
                    self.ready.set()
                for event in self.dyn.watch(jobs, namespace=self.namespace, watcher=self.watcher, timeout=600,
                                            resource_version=listed["metadata"]["resourceVersion"]):
                    self._note(event["raw_object"])
            except Exception:  # noqa: BLE001 - the namespace is deleted under the watch at the end
                time.sleep(0.2)

    def stop(self) -> None:
        self.stopping.set()
        self.watcher.stop()

    def _note(self, obj: Dict[str, Any]) -> None:
        name = obj["metadata"]["name"]
        self.created.setdefault(name, time.time())
        for cond in (obj.get("status") or {}).get("conditions") or []:
            if cond["type"] == "Complete" and cond["status"] == "True":
                self.seen.setdefault(name, time.time())
                ltt = datetime.strptime(cond["lastTransitionTime"], "%Y-%m-%dT%H:%M:%SZ")
                self.transition.setdefault(name, ltt.replace(tzinfo=timezone.utc).timestamp())


def metrics(dyn: dynamic.DynamicClient, group: Optional[str] = GROUP) -> Dict[Tuple[str, str], float]:
    """apiserver_request_total for the resources of `group` (None: of every
    group), by (resource[/subresource], verb)."""
    text = dyn.request("GET", "/metrics")
    out: Dict[Tuple[str, str], float] = {}
    for line in text.splitlines():
        if not line.startswith("apiserver_request_total{") or (group is not None and f'group="{group}"' not in line):
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', line))
        key = (labels.get("resource", "") + ("/" + labels["subresource"] if labels.get("subresource") else ""),
               labels.get("verb", ""))
        out[key] = out.get(key, 0) + float(line.rsplit(" ", 1)[1])
    return out


def delta(before: Dict, after: Dict) -> int:
    return int(sum(after.values()) - sum(before.values()))


def run_ansible(module: str, args: Dict[str, Any]) -> None:
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(ROOT / "build" / "collections"),
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false")
    proc = subprocess.run([ANSIBLE, "localhost", "-m", module, "-a", json.dumps(args)],
                          capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{module} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")


class CountingClient:
    """Counts the HTTP requests an ApiClient sends."""

    def __init__(self, api_client: Any) -> None:
        self.count = 0
        inner = api_client.call_api

        def call_api(*args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return inner(*args, **kwargs)
        api_client.call_api = call_api


def fresh_namespace(dyn: dynamic.DynamicClient, ns: str) -> None:
    """Create `ns` and wait for its default ServiceAccount, which its pods need."""
    namespaces = dyn.resources.get(api_version="v1", kind="Namespace")
    namespaces.create(body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    sas = dyn.resources.get(api_version="v1", kind="ServiceAccount")
    while not sas.get(namespace=ns).to_dict()["items"]:
        time.sleep(0.1)


def one_run(dyn: dynamic.DynamicClient, kubeconfig: str) -> Dict[str, Dict[str, float]]:
    ns = f"bench-{uuid.uuid4().hex[:6]}"
    namespaces = dyn.resources.get(api_version="v1", kind="Namespace")
    fresh_namespace(dyn, ns)
    observer = Observer(dyn, ns)
    observer.start()
    observer.ready.wait()
    out: Dict[str, Dict[str, float]] = {}
    try:
        # The engine, in-process, on its own client so its requests can be counted.
        api = config.new_client_from_config(config_file=kubeconfig)
        counter = CountingClient(api)
        before = metrics(dyn)
        req = PhaseRequest(type="install", service="engine", release="engine", namespace=ns,
                           source=Source(manifests=[job("engine-job")], selection="manifests"))
        PhaseRunner(dynamic.DynamicClient(api), req).present()
        done = time.time()
        out["engine"] = {"lag": done - observer.seen["engine-job"],
                         "lag_ltt": done - observer.transition["engine-job"],
                         "requests": counter.count, "lifecycle_requests": delta(before, metrics(dyn))}

        before = metrics(dyn)
        run_ansible("lcm.openstack.phase", {
            "type": "install", "service": "module", "namespace": ns,
            "source": {"manifests": [job("module-job")], "selection": "manifests"}})
        done = time.time()
        out["phase"] = {"lag": done - observer.seen["module-job"],
                        "lag_ltt": done - observer.transition["module-job"],
                        "lifecycle_requests": delta(before, metrics(dyn))}

        body = job("k8s-job")
        body["metadata"]["namespace"] = ns
        run_ansible("kubernetes.core.k8s", {
            "definition": body, "wait": True, "wait_timeout": 120,
            "wait_condition": {"type": "Complete", "status": "True"}})
        done = time.time()
        out["k8s"] = {"lag": done - observer.seen["k8s-job"],
                      "lag_ltt": done - observer.transition["k8s-job"]}
    finally:
        observer.stop()
        namespaces.delete(name=ns)
    return out


def install_crds(dyn: dynamic.DynamicClient) -> None:
    import yaml

    for path in sorted((ROOT / "roles" / "crds" / "files").glob("*.yaml")):
        body = yaml.safe_load(path.read_text())
        dyn.resources.get(api_version=body["apiVersion"], kind=body["kind"]).server_side_apply(
            body=body, name=body["metadata"]["name"], field_manager="lcm.openstack", force_conflicts=True)
    crds = dyn.resources.get(api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition")
    for event in dyn.watch(crds, field_selector="metadata.name=phases.lifecycle.openstack.org", timeout=60):
        if any(c["type"] == "Established" and c["status"] == "True"
               for c in (event["raw_object"].get("status") or {}).get("conditions") or []):
            break
    dyn.resources.invalidate_cache()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    kubeconfig = os.environ.get("KUBECONFIG") or str(ROOT / ".cluster" / "kubeconfig")
    dyn = dynamic.DynamicClient(config.new_client_from_config(config_file=kubeconfig))
    install_crds(dyn)
    runs: List[Dict[str, Dict[str, float]]] = []
    for i in range(args.runs):
        runs.append(one_run(dyn, kubeconfig))
        print(f"run {i + 1}/{args.runs}: " + ", ".join(
            f"{k} {v['lag']:.2f}s" for k, v in runs[-1].items()), file=sys.stderr, flush=True)

    def col(waiter: str, field: str) -> List[float]:
        return [r[waiter][field] for r in runs if field in r[waiter]]

    print(f"### Phase wait lag ({args.runs} runs, {datetime.now(timezone.utc):%Y-%m-%d})\n")
    print("| waiter | median lag | min | max | median lag vs lastTransitionTime | requests |")
    print("|---|---|---|---|---|---|")
    labels = {"engine": "phase engine, in-process", "phase": "`lcm.openstack.phase` via ansible",
              "k8s": "`kubernetes.core.k8s` wait: true via ansible"}
    for waiter in ("engine", "phase", "k8s"):
        lag = col(waiter, "lag")
        reqs = ""
        if waiter == "engine":
            reqs = (f"{statistics.median(col(waiter, 'requests')):.0f} in total, "
                    f"{statistics.median(col(waiter, 'lifecycle_requests')):.0f} on lifecycle resources (/metrics)")
        elif waiter == "phase":
            reqs = f"{statistics.median(col(waiter, 'lifecycle_requests')):.0f} on lifecycle resources (/metrics)"
        print(f"| {labels[waiter]} | {statistics.median(lag):.2f} s | {min(lag):.2f} s | {max(lag):.2f} s "
              f"| {statistics.median(col(waiter, 'lag_ltt')):.2f} s | {reqs} |")


if __name__ == "__main__":
    main()
