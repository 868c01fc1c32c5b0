"""The lcm.openstack.lifecycle_summary callback through ansible-playbook against the real cluster:
a line as each phase starts and ends, beside the default stdout callback, and a table per service
when the run ends; run again, the same playbook finds its phases done."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
import yaml
from kubernetes import dynamic

from support.ansible import BIN, ROOT

GROUP = "lifecycle.openstack.org/v1alpha1"
STAMP = r"\[lifecycle \d\d:\d\d:\d\d\] "
JOB = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "svc-db-sync"},
       "spec": {"backoffLimit": 0, "template": {"spec": {
           "restartPolicy": "Never", "containers": [{"name": "db-sync", "image": "registry.invalid/svc:1"}]}}}}
API = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc-api"},
       "spec": {"selector": {"app": "svc", "track": "2025.1"}, "ports": [{"port": 80, "targetPort": 8080}]}}
TEST_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "svc-test"},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "test", "image": "registry.invalid/svc:1"}]}}


def play(namespace: str, tasks: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    return [{"name": "Phases of svc", "hosts": "localhost", "connection": "local", "gather_facts": False,
             # The short name `phase` resolves through the collections keyword.
             "collections": ["lcm.openstack"],
             "vars": {"lifecycle_namespace": namespace, "lifecycle_service": "svc"},
             "roles": ["lcm.openstack.crds"], "tasks": tasks}]


def install_drain_test(namespace: str) -> List[Dict[str, Any]]:
    return play(namespace, [
        {"name": "Install svc", "lcm.openstack.phase": {
            "type": "install", "service": "svc", "namespace": "{{ lifecycle_namespace }}",
            "target_version": "2025.1", "source": {"selection": "manifests", "manifests": [JOB, API]}}},
        {"name": "Drain svc", "lcm.openstack.traffic": {
            "action": "drain", "service": "svc", "namespace": "{{ lifecycle_namespace }}",
            "selector_service": "svc-api", "drain_grace_seconds": 0}},
        # Arguments that are templates at task start: the line names the task only.
        {"name": "Test {{ lifecycle_service }}", "phase": {
            "type": "test", "service": "{{ lifecycle_service }}", "namespace": "{{ lifecycle_namespace }}",
            "source": {"selection": "manifests", "manifests": [TEST_POD]}}},
    ])


def playbook(tmp_path: Path, kubeconfig: str, plays: List[Dict[str, Any]],
             env: Optional[Dict[str, str]] = None) -> subprocess.CompletedProcess:
    path = tmp_path / "play.yml"
    path.write_text(yaml.safe_dump(plays, sort_keys=False))
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("LCM_LIFECYCLE_SUMMARY")}
    full_env.update({
        "ANSIBLE_COLLECTIONS_PATH": str(ROOT / "build" / "collections"),
        "ANSIBLE_CALLBACKS_ENABLED": "lcm.openstack.lifecycle_summary",
        "ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.default",
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_FORCE_COLOR": "0",
        "ANSIBLE_LOCALHOST_WARNING": "false",
        "ANSIBLE_INVENTORY_UNPARSED_WARNING": "false",
        "K8S_AUTH_KUBECONFIG": kubeconfig,
    })
    full_env.update(env or {})
    # No inventory: the implicit localhost runs modules with this Python, which has the kubernetes client.
    return subprocess.run([str(BIN / "ansible-playbook"), str(path)], cwd=tmp_path,
                          capture_output=True, text=True, env=full_env, check=False, timeout=300)


def phase_names(dyn: dynamic.DynamicClient, namespace: str) -> Dict[str, str]:
    """type -> name of the Phases in the namespace."""
    phases = dyn.resources.get(api_version=GROUP, kind="Phase").get(namespace=namespace).to_dict()["items"]
    return {p["spec"]["type"]: p["metadata"]["name"] for p in phases}


def summary(stdout: str) -> List[str]:
    """The lines after the callback's banner."""
    lines = stdout.splitlines()
    (start,) = [i for i, line in enumerate(lines) if line.startswith("LIFECYCLE SUMMARY *")]
    return [line for line in lines[start + 1:] if line.strip()]


def index(lines: List[str], pattern: str) -> int:
    found = [i for i, line in enumerate(lines) if re.fullmatch(pattern, line)]
    assert len(found) == 1, f"{pattern!r} in:\n" + "\n".join(lines)
    return found[0]


def test_progress_lines_and_a_table_then_earlier_run_on_a_rerun(
        tmp_path: Path, dyn, kubeconfig: str, namespace: str) -> None:
    first = playbook(tmp_path, kubeconfig, install_drain_test(namespace))
    assert first.returncode == 0, first.stdout[-4000:] + first.stderr[-2000:]
    names = phase_names(dyn, namespace)
    assert sorted(names) == ["install", "test", "trafficdrain"]
    out = first.stdout.splitlines()

    # Each line comes right after the stdout callback's own line for the task.
    task = index(out, r"TASK \[Install svc\] \**")
    started = index(out, STAMP + r"svc: install phase starting \(task: Install svc\)")
    ended = index(out, STAMP + rf"svc: install Succeeded in \d+s \(Phase {names['install']}\)")
    assert task < started < ended
    assert out[ended - 1].startswith("changed: [localhost]")
    assert index(out, STAMP + r"svc: trafficdrain phase starting \(task: Drain svc\)") < \
        index(out, STAMP + rf"svc: trafficdrain Succeeded in \d+s \(Phase {names['trafficdrain']}\)")
    assert index(out, STAMP + r"test phase starting \(task: Test svc\)") < \
        index(out, STAMP + rf"svc: test Succeeded in \d+s \(Phase {names['test']}\)")
    # The crds role's tasks are none of its business.
    assert not [line for line in out if line.startswith("[lifecycle") and "crds" in line]

    table = summary(first.stdout)
    assert table[:2] == [f"svc ({namespace})", "PHASE         RESULT     DURATION  PHASE RESOURCE"]
    assert [line.split() for line in table[2:]] == [
        ["install", "Succeeded", line_duration(table[2]), names["install"]],
        ["trafficdrain", "Succeeded", line_duration(table[3]), names["trafficdrain"]],
        ["test", "Succeeded", line_duration(table[4]), names["test"]],
    ]
    assert first.stdout.rstrip().endswith(table[-1])  # the table is the last thing printed

    again = playbook(tmp_path, kubeconfig, install_drain_test(namespace))
    assert again.returncode == 0, again.stdout[-4000:] + again.stderr[-2000:]
    assert phase_names(dyn, namespace) == names
    out = again.stdout.splitlines()
    index(out, STAMP + rf"svc: install Succeeded in an earlier run \(Phase {names['install']}\)")
    index(out, STAMP + r"svc: trafficdrain in place, nothing to change: Service svc-api is gated "
                       r"\(lifecycle.openstack.org/traffic=drained\): drained, no endpoint left")
    index(out, STAMP + rf"svc: test Succeeded in an earlier run \(Phase {names['test']}\)")
    assert summary(again.stdout) == [
        f"svc ({namespace})",
        "PHASE         RESULT                   DURATION  PHASE RESOURCE",
        f"install       Succeeded (earlier run)  {table[2].split()[2]:<8}  {names['install']}",
        "trafficdrain  in place                 -         -",
        f"test          Succeeded (earlier run)  {table[4].split()[2]:<8}  {names['test']}",
    ]


def line_duration(row: str) -> str:
    duration = row.split()[2]
    assert re.fullmatch(r"\d+s", duration), row
    return duration


@pytest.mark.bed
def test_a_failed_phase_is_in_the_table_of_a_failed_run(
        tmp_path: Path, dyn, kubeconfig: str, namespace: str) -> None:
    failing = dict(TEST_POD, metadata={"name": "svc-test", "annotations": {
        "bed.lcm.openstack.org/fail": "smoke: 3 of 12 API calls failed"}})
    plays = play(namespace, [{"name": "Test svc", "lcm.openstack.phase": {
        "type": "test", "service": "svc", "namespace": namespace,
        "source": {"selection": "manifests", "manifests": [failing]}}}])
    proc = playbook(tmp_path, kubeconfig, plays, env={"LCM_LIFECYCLE_SUMMARY_PROGRESS": "false"})
    assert proc.returncode == 2, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "[lifecycle" not in proc.stdout  # show_progress=false: the table only
    name = phase_names(dyn, namespace)["test"]
    assert summary(proc.stdout) == [
        f"svc ({namespace})",
        "PHASE  RESULT  DURATION  PHASE RESOURCE",
        f"test   Failed  {summary(proc.stdout)[2].split()[2]:<8}  {name}",
    ]


def test_a_run_without_phases_prints_nothing_of_its_own(tmp_path: Path, kubeconfig: str) -> None:
    plays = [{"name": "No phase", "hosts": "localhost", "connection": "local", "gather_facts": False,
              "tasks": [{"name": "Say hello", "ansible.builtin.debug": {"msg": "hello"}}]}]
    proc = playbook(tmp_path, kubeconfig, plays)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "hello" in proc.stdout
    assert "[lifecycle" not in proc.stdout and "LIFECYCLE SUMMARY" not in proc.stdout
