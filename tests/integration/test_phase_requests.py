"""What lcm.openstack.phase asks of the apiserver before its first Job, as
the client notes it (bench/requests_log.py): its ServiceLifecycle and its
service's flow Lease read once each, and a re-run of a Succeeded phase
reading the record once; the records as a run leaves them all the same."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from support.ansible import run_module
from support.paths import ROOT


def _requests_log() -> Any:
    spec = importlib.util.spec_from_file_location("bench_requests_log", ROOT / "bench" / "requests_log.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


requests_log = _requests_log()


def _job(name: str) -> Dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"backoffLimit": 0, "template": {
                "metadata": {"annotations": {"bed.lcm.openstack.org/duration": "500ms"}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "registry.invalid/t:1"}]}}}}


def _run(kubeconfig: str, ns: str, job: str, tmp_path: Path, label: str) -> Tuple[Dict[str, Any], List[Tuple[str, str]]]:
    """The module's result, and the requests it sent (method, path), in order."""
    log = tmp_path / f"{label}.log"
    args = {"type": "install", "service": "noop", "namespace": ns,
            "source": {"manifests": [_job(job)], "selection": "manifests"}}
    result = run_module("phase", args, kubeconfig, env=requests_log.hooked(tmp_path, log))
    assert result.get("failed") is None, result.get("msg")
    return result, [(method, url.split("?")[0]) for _when, method, url in requests_log.noted(log)]


def _before_the_job(sent: List[Tuple[str, str]], ns: str, job: str) -> List[Tuple[str, str]]:
    """The requests before the Job's apply (not its dry run)."""
    applied = [i for i, (method, url) in enumerate(sent) if method == "PATCH" and url.endswith(f"/jobs/{job}")]
    return sent[:applied[-1]]


def _reads(sent: List[Tuple[str, str]], path: str) -> int:
    return sum(1 for method, url in sent if method == "GET" and url.endswith(path))


@pytest.mark.bed
def test_a_phase_reads_its_record_and_its_lease_once_before_its_job(kubeconfig, crds, namespace, tmp_path) -> None:
    slc, lease = f"/namespaces/{namespace}/servicelifecycles/noop", f"/namespaces/{namespace}/leases/lcm-flow-noop"
    first, sent = _run(kubeconfig, namespace, "first-job", tmp_path, "first")
    before = _before_the_job(sent, namespace, "first-job")
    # Not there yet: read again right before the apply that creates it.
    assert (_reads(before, slc), _reads(before, lease)) == (2, 1), before
    second, sent = _run(kubeconfig, namespace, "second-job", tmp_path, "second")
    before = _before_the_job(sent, namespace, "second-job")
    assert (_reads(before, slc), _reads(before, lease)) == (1, 1), before
    assert first["changed"] and second["changed"] and second["phase"]["state"] == "Succeeded"
    again, sent = _run(kubeconfig, namespace, "second-job", tmp_path, "again")
    assert again["changed"] is False and _reads(sent, slc) == 1
    assert not [r for r in sent if r[0] != "GET"], sent  # nothing written
