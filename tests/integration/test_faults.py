"""Faults on the bed: the network between the modules and a healthy
apiserver breaks, and the phase carries on. The connections go through a
loopback TCP proxy (support/tcp_proxy.py) that resets them on demand; what
is checked is the Phase's outcome and what ran, not only the exit code."""

from __future__ import annotations

from pathlib import Path

import pytest
from kubernetes import dynamic

from support.ansible import run_module
from support.tcp_proxy import Proxy
from support.phase_args import GROUP, phase_args

pytestmark = pytest.mark.bed


def _pods_of(dyn: dynamic.DynamicClient, namespace: str, job: str) -> list:
    pods = dyn.resources.get(api_version="v1", kind="Pod").get(
        namespace=namespace, label_selector=f"batch.kubernetes.io/job-name={job}").to_dict()["items"]
    return pods


def test_connections_dropped_every_two_seconds_do_not_fail_a_phase(
        dyn: dynamic.DynamicClient, kubeconfig: str, crds: None, namespace: str, tmp_path: Path) -> None:
    """db-sync runs 20 s; every watch the wait holds is cut about ten times."""
    through = tmp_path / "kubeconfig"
    proxy = Proxy.for_kubeconfig(kubeconfig, through)
    stop = proxy.drop_every(2.0)
    try:
        result = run_module("phase", phase_args(namespace, values={"jobs": {"db_sync": {"duration": "20s"}}}),
                            kubeconfig=str(through))
    finally:
        stop.set()
        proxy.close()

    assert result.get("failed") is None, result.get("msg")
    assert result["phase"]["state"] == "Succeeded"
    assert proxy.dropped >= 5  # the wait really lost its connections, more than once
    phase = dyn.resources.get(api_version=GROUP, kind="Phase").get(
        name=result["phase"]["name"], namespace=namespace).to_dict()
    assert phase["status"]["state"] == "Succeeded"
    jobs = [o["name"] for o in phase["status"]["objects"] if o["kind"] == "Job"]
    assert any(j.endswith("db-sync") for j in jobs)
    for job in jobs:  # each Job ran once: created once, one pod, never re-created
        assert len(_pods_of(dyn, namespace, job)) == 1, job
