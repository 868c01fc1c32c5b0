"""A flow's start waits, by watch, for the services it depends on: keystone's
start runs as `ansible localhost -m lcm.openstack.service_lifecycle` while the
test brings mariadb's ServiceLifecycle to Operational, or to Removed."""

from __future__ import annotations

import subprocess
import time
from typing import Any, Dict, Iterator

import pytest
from kubernetes import dynamic

from support import kube
from support.ansible import module_command, module_result

GROUP = "lifecycle.openstack.org/v1alpha1"


@pytest.fixture
def ns(crds: None, namespace: str) -> str:
    return namespace


def _records(dyn: dynamic.DynamicClient) -> Any:
    return dyn.resources.get(api_version=GROUP, kind="ServiceLifecycle")


def _set_mariadb(dyn: dynamic.DynamicClient, ns: str, status: Dict[str, Any]) -> None:
    """mariadb's record with this status, created first when it is missing."""
    res = _records(dyn)
    current = kube.get_or_none(dyn, GROUP, "ServiceLifecycle", "mariadb", ns)
    if current is None:
        current = res.create(namespace=ns, body={
            "apiVersion": GROUP, "kind": "ServiceLifecycle",
            "metadata": {"name": "mariadb", "labels": {"lifecycle.openstack.org/service": "mariadb"}},
            "spec": {"service": "mariadb", "release": "mariadb"}}).to_dict()
    res.status.replace(namespace=ns, body=dict(current, status=status))


class _Start:
    """keystone's flow start, running in the background until finished()."""

    def __init__(self, kubeconfig: str, ns: str, **args: Any) -> None:
        module_args = dict(service="keystone", namespace=ns, depends_on=["mariadb"],
                           flow={"name": "greenfield", "action": "start", "target_version": "2025.1"}, **args)
        self.cmd, env = module_command("service_lifecycle", module_args, kubeconfig=kubeconfig)
        self.started = time.monotonic()
        self.proc = subprocess.Popen(self.cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def finished(self, timeout: float = 120) -> Dict[str, Any]:
        stdout, stderr = self.proc.communicate(timeout=timeout)
        self.took = time.monotonic() - self.started
        return module_result(self.cmd, self.proc.returncode, stdout, stderr)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


@pytest.fixture
def started(kubeconfig: str) -> Iterator[Any]:
    runs = []

    def start(ns: str, **args: Any) -> _Start:
        runs.append(_Start(kubeconfig, ns, **args))
        return runs[-1]
    yield start
    for run in runs:
        run.stop()


def _waiting_for(dyn: dynamic.DynamicClient, ns: str, text: str) -> Dict[str, Any]:
    """keystone's record once its DependenciesReady condition says it waits for `text`."""
    def waiting(obj: Dict[str, Any]) -> bool:
        found = kube.condition(obj, "DependenciesReady") or {}
        return found.get("status") == "False" and text in found.get("message", "")
    waiting.__name__ = f"DependenciesReady=False ({text})"
    return kube.wait_for(dyn, GROUP, "ServiceLifecycle", "keystone", ns, waiting, timeout=60)


def test_a_start_waits_until_its_dependency_is_operational(dyn: dynamic.DynamicClient, ns: str, started: Any) -> None:
    run = started(ns, dependency_timeout=60)
    waiting = _waiting_for(dyn, ns, "mariadb (no ServiceLifecycle in")
    assert kube.condition(waiting, "DependenciesReady")["message"] == f"waiting for mariadb (no ServiceLifecycle in {ns})"
    assert "flow" not in waiting.get("status", {})  # nothing started while it waits
    _set_mariadb(dyn, ns, {"state": "Installing"})
    _waiting_for(dyn, ns, "mariadb (Installing)")
    time.sleep(1)  # mariadb takes its time: the wait lasts long enough to be measured
    _set_mariadb(dyn, ns, {"state": "Operational", "currentVersion": "10.11"})

    result = run.finished()
    assert result.get("failed") is None, result.get("msg")
    assert result["waited_for"] == ["mariadb"] and 1 <= result["waited"] < 60
    assert result["lifecycle"]["flow"]["state"] == "Running" and result["lifecycle"]["depends_on"] == ["mariadb"]
    record = _records(dyn).get(name="keystone", namespace=ns).to_dict()
    ready = kube.condition(record, "DependenciesReady")
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "True", "Met", "met: mariadb (Operational, version 10.11)")


def test_a_dependency_that_is_removed_fails_the_start_at_once(dyn: dynamic.DynamicClient, ns: str,
                                                              started: Any) -> None:
    _set_mariadb(dyn, ns, {"state": "Installing", "flow": {
        "name": "greenfield", "state": "Running", "startedAt": "2026-01-01T00:00:00Z"}})
    run = started(ns, dependency_timeout=60)
    _waiting_for(dyn, ns, "mariadb (Installing)")
    _set_mariadb(dyn, ns, {"state": "Removed", "flow": {
        "name": "greenfield", "state": "Failed", "startedAt": "2026-01-01T00:00:00Z",
        "completedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "message": "removed because db-sync failed"}})

    result = run.finished()
    assert result.get("failed") is True
    assert result["msg"].startswith("keystone waits for mariadb, which is Removed (its greenfield flow failed: "
                                    "removed because db-sync failed). No flow runs to bring it back"), result["msg"]
    assert run.took < 40  # at once, not at the end of the 60 s
    record = _records(dyn).get(name="keystone", namespace=ns).to_dict()
    assert "flow" not in record.get("status", {})
    assert kube.condition(record, "DependenciesReady")["reason"] == "DependencyLost"
    lease = dyn.resources.get(api_version="coordination.k8s.io/v1", kind="Lease").get(
        name="lcm-flow-keystone", namespace=ns).to_dict()
    assert not lease["spec"].get("holderIdentity")  # given back: nothing holds keystone
