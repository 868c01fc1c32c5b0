"""Live progress through ansible-playbook and ansible-runner against the real cluster: each wave
and each Job's change is a line, shown as it happens (before the task's result, in order), the
same lines are AWX job events, -v adds the configuration objects, and a failing pod's message is
shown masked."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
import yaml

from support.ansible import BIN, PLAIN_TEXT, ROOT

PASSWORD = "Zq8-progress-pw-4471"
CONFIG = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "svc-etc"}, "data": {"svc.conf": "debug = false"}}
SECRET = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "svc-db"}, "stringData": {"password": PASSWORD}}


def job(name: str, wave: str, seconds: str = "3s", fail: Optional[str] = None) -> Dict[str, Any]:
    annotations = {"bed.lcm.openstack.org/duration": seconds}
    if fail:
        annotations["bed.lcm.openstack.org/fail"] = fail
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "annotations": {"lifecycle.openstack.org/wave": wave}},
            "spec": {"backoffLimit": 0, "template": {"metadata": {"annotations": annotations}, "spec": {
                "restartPolicy": "Never", "containers": [{"name": "run", "image": "registry.invalid/svc:1"}]}}}}


def install(namespace: str, manifests: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    return [{"name": "Progress of svc", "hosts": "localhost", "connection": "local", "gather_facts": False,
             "tasks": [{"name": "Install svc", "lcm.openstack.phase": {
                 "type": "install", "service": "svc", "namespace": namespace, "target_version": "2025.1",
                 "source": {"selection": "manifests", "manifests": manifests}}}]}]


def environment(kubeconfig: str) -> Dict[str, str]:
    return {
        "ANSIBLE_COLLECTIONS_PATH": str(ROOT / "build" / "collections"),
        **PLAIN_TEXT,
        "ANSIBLE_LOCALHOST_WARNING": "false",
        "ANSIBLE_INVENTORY_UNPARSED_WARNING": "false",
        "K8S_AUTH_KUBECONFIG": kubeconfig,
    }


def playbook(tmp_path: Path, kubeconfig: str, plays: List[Dict[str, Any]]) -> subprocess.CompletedProcess:
    path = tmp_path / "play.yml"
    path.write_text(yaml.safe_dump(plays, sort_keys=False))
    env = {k: v for k, v in os.environ.items() if k != "LCM_PROGRESS"}
    env.update(environment(kubeconfig))
    return subprocess.run([str(BIN / "ansible-playbook"), str(path)], cwd=tmp_path,
                          capture_output=True, text=True, env=env, check=False, timeout=300)


def progress(lines: List[str]) -> List[str]:
    """The progress lines, without the host prefix."""
    return [line[len("[localhost] "):] for line in lines if line.startswith("[localhost] svc ")]


def expected_order(phase_line: str) -> List[str]:
    """What a three-wave install says, in order (patterns; InProgress lines may repeat)."""
    return [
        re.escape(phase_line),
        r"svc install wave 1/3: started: ConfigMap svc-etc",
        r"svc install wave 1/3: done: 1 object\(s\) Current in \d+ s",
        r"svc install wave 2/3: started: Job svc-db-init",
        r"svc install wave 2/3: Job svc-db-init InProgress: 0/1 succeeded, 1 active, \d+ s left",
        r"svc install wave 2/3: Job svc-db-init Current: 1/1 succeeded",
        r"svc install wave 2/3: done: 1 object\(s\) Current in \d+ s",
        r"svc install wave 3/3: started: Job svc-db-sync",
        r"svc install wave 3/3: Job svc-db-sync InProgress: 0/1 succeeded, 1 active, \d+ s left",
        r"svc install wave 3/3: Job svc-db-sync Current: 1/1 succeeded",
        r"svc install wave 3/3: done: 1 object\(s\) Current in \d+ s",
    ]


def in_order(lines: List[str], patterns: List[str]) -> None:
    """Each pattern matches a line, later than the previous pattern's; the lines between are
    only more InProgress lines of the same Job."""
    at = -1
    for pattern in patterns:
        found = [i for i, line in enumerate(lines) if i > at and re.fullmatch(pattern, line)]
        assert found, f"{pattern!r} after line {at} in:\n" + "\n".join(lines)
        skipped = lines[at + 1:found[0]]
        assert all(" InProgress: " in line for line in skipped), (pattern, skipped)
        at = found[0]
    assert at == len(lines) - 1, lines[at:]


MANIFESTS = [CONFIG, job("svc-db-init", "1"), job("svc-db-sync", "2")]


@pytest.mark.bed
def test_each_wave_and_job_change_is_a_line_before_the_result(tmp_path: Path, kubeconfig: str, namespace: str) -> None:
    proc = playbook(tmp_path, kubeconfig, install(namespace, MANIFESTS))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    out = proc.stdout.splitlines()
    task = out.index(next(line for line in out if line.startswith("TASK [Install svc]")))
    result = out.index("changed: [localhost]")
    lines = progress(out)
    name = re.fullmatch(r"svc install: Phase (svc-install-[0-9a-f]{8}): 3 object\(s\) in 3 wave\(s\), timeout 600 s",
                        lines[0])
    assert name, lines
    in_order(lines, expected_order(lines[0]))
    # All of them between the task's banner and its result, nothing after.
    assert [i for i, line in enumerate(out) if line.startswith("[localhost] ")] == list(range(task + 1, result))
    assert "ConfigMap svc-etc Current" not in proc.stdout  # -v only

    again = playbook(tmp_path, kubeconfig, install(namespace, MANIFESTS))
    assert again.returncode == 0, again.stdout[-4000:]
    assert "ok: [localhost]" in again.stdout.splitlines()
    assert progress(again.stdout.splitlines()) == []  # done earlier: nothing waited, nothing said


@pytest.mark.bed
def test_the_same_lines_are_job_events_through_ansible_runner(tmp_path: Path, kubeconfig: str, namespace: str) -> None:
    ansible_runner = pytest.importorskip("ansible_runner")
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "play.yml").write_text(yaml.safe_dump(install(namespace, MANIFESTS), sort_keys=False))
    env = environment(kubeconfig)
    env["PATH"] = os.environ["PATH"]
    run = ansible_runner.run(private_data_dir=str(tmp_path), playbook="play.yml", envvars=env, verbosity=1,
                             quiet=True, settings={"suppress_env_files": True})
    assert run.rc == 0, run.stdout.read()[-4000:]
    events = list(run.events)
    started = next(i for i, e in enumerate(events) if e["event"] == "playbook_on_task_start"
                   and e["event_data"].get("task") == "Install svc")
    ended = next(i for i, e in enumerate(events) if e["event"] == "runner_on_ok"
                 and e["event_data"].get("task") == "Install svc")
    said = [(i, e) for i, e in enumerate(events) if e.get("stdout", "").startswith("[localhost] svc ")]
    assert said and all(e["event"] == "verbose" and started < i < ended for i, e in said), said
    lines = progress([e["stdout"] for i, e in said])
    # -v: the ConfigMap's own line, at its place in the first wave.
    assert re.fullmatch(r"svc install wave 1/3: ConfigMap svc-etc Current: exists", lines[2]), lines
    in_order(lines[:2] + lines[3:], expected_order(lines[0]))


@pytest.mark.bed
def test_a_failing_pod_is_a_line_with_its_reason_and_no_password(tmp_path: Path, kubeconfig: str,
                                                                 namespace: str) -> None:
    """As an openstack-helm Job fails: restarting in place, counted by the phase's failure threshold."""
    failing = job("svc-db-sync", "1", "1s", fail=f"db-sync: cannot connect to mariadb:3306 (password={PASSWORD})")
    failing["spec"]["backoffLimit"] = 1000
    failing["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    plays = install(namespace, [SECRET, failing])
    plays[0]["tasks"][0]["lcm.openstack.phase"]["failure"] = {"threshold": 2}
    proc = playbook(tmp_path, kubeconfig, plays)
    assert proc.returncode == 2, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert PASSWORD not in proc.stdout + proc.stderr
    out = proc.stdout.splitlines()
    lines = progress(out)
    why = r"last: pod svc-db-sync-\w+ container run exited 1 \(Error\): db-sync: cannot connect to mariadb:3306 \(password=\*+\)?"
    running = [line for line in lines if re.fullmatch(
        r"svc install wave 2/2: Job svc-db-sync InProgress: .*1 failed run\(s\), threshold 2; " + why + r", \d+ s left", line)]
    failed = [line for line in lines if re.fullmatch(
        r"svc install wave 2/2: Job svc-db-sync Failed: 2 failed run\(s\) of its pods reached the failure threshold 2; "
        + why, line)]
    assert len(running) == 1 and len(failed) == 1, "\n".join(lines)
    assert lines.index(running[0]) < lines.index(failed[0])
    assert out.index("[localhost] " + failed[0]) < out.index(next(line for line in out if line.startswith("fatal: [localhost]")))
