"""The flow playbooks through ansible-runner, the engine AWX runs job templates
with: its events and artifacts are what an AWX job shows and keeps."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List

import ansible_runner
import pytest

from support.ansible import ROOT

CHART = str(ROOT / "examples" / "charts" / "keystone")


@pytest.fixture
def ns(crds, namespace) -> str:
    return namespace


def run_flow(tmp_path: Path, kubeconfig: str, playbook: str, extravars: Dict[str, Any]) -> Any:
    """One job, as AWX runs it: a private data dir, extra vars, an env, artifacts."""
    env = {k: os.environ[k] for k in ("PATH", "HOME", "HELM_BIN", "KUBECTL_BIN") if k in os.environ}
    env.update(ANSIBLE_COLLECTIONS_PATH=str(ROOT / "build" / "collections"), K8S_AUTH_KUBECONFIG=kubeconfig,
               KUBECONFIG=kubeconfig, ANSIBLE_NOCOLOR="1")
    return ansible_runner.run(
        private_data_dir=str(tmp_path), playbook=str(ROOT / "playbooks" / playbook),
        inventory=str(ROOT / "examples" / "inventory.yml"), extravars=extravars, envvars=env,
        quiet=True, ident="job")


def task_results(runner: Any, event: str = "runner_on_ok") -> List[Dict[str, Any]]:
    return [e["event_data"] for e in runner.events if e["event"] == event]


def test_greenfield_runs_through_ansible_runner(tmp_path: Path, kubeconfig: str, ns: str, dyn) -> None:
    # A record with no status, as a first run that failed early leaves it: it
    # does not make greenfield think the service is deployed.
    dyn.resources.get(api_version="lifecycle.openstack.org/v1alpha1", kind="ServiceLifecycle").create(
        namespace=ns, body={"apiVersion": "lifecycle.openstack.org/v1alpha1", "kind": "ServiceLifecycle",
                            "metadata": {"name": "keystone", "labels": {"lifecycle.openstack.org/service": "keystone"}},
                            "spec": {"service": "keystone", "release": "keystone"}})
    runner = run_flow(tmp_path, kubeconfig, "greenfield.yml",
                      {"service": "keystone", "openstack_namespace": ns, "chart": CHART, "version": "2025.1",
                       "phase_timeout": 120})
    out = runner.stdout.read()
    assert (runner.status, runner.rc) == ("successful", 0), out[-3000:]
    # openstack_namespace, not namespace: no reserved-name warning in the job.
    assert "reserved name" not in out

    # The events AWX stores: the stats say no host failed, and each phase's
    # task result carries the Phase it ran.
    (stats,) = [e["event_data"] for e in runner.events if e["event"] == "playbook_on_stats"]
    assert stats["failures"] == {} and stats["ok"].get("localhost", 0) > 0
    phases = [r["res"]["phase"] for r in task_results(runner) if r.get("res", {}).get("phase")]
    # A new release is not gated: the traffic rollout finds it open and makes no Phase.
    assert [(p["type"], p["state"]) for p in phases] == [("install", "Succeeded"), ("test", "Succeeded")]
    summary = [r["res"]["msg"] for r in task_results(runner) if r["task"] == "Summary"]
    assert summary and summary[0][0].endswith("greenfield flow Succeeded, version 2025.1; service Operational")
    assert [row.split()[0] for row in summary[0][2:4]] == ["install", "test"] and summary[0][4].startswith("total")
    # The rollout, the flow's last step, ended the flow in its own module run and gave the flow's Lease
    # back: service_lifecycle ran once, for the start. The summary printed the report it returned.
    ran = [r["task_action"] for r in task_results(runner)]
    assert ran.count("lcm.openstack.service_lifecycle") == 1 and ran.count("lcm.openstack.traffic") == 1
    (rollout,) = [r["res"] for r in task_results(runner) if r["task_action"] == "lcm.openstack.traffic"]
    assert rollout["lease"] == "released" and rollout["lifecycle"]["flow"]["state"] == "Succeeded"
    assert rollout["report"].split("\n") == summary[0]
    assert not any(r["task_action"] == "lcm.openstack.phase_info" and r["task"] == "Read the flow's record"
                   for r in task_results(runner))
    # A record that says nothing yet makes it a new service whatever Helm would do: no preview run.
    assert "Would the release change?" in [r["task"] for r in task_results(runner, "runner_on_skipped")]
    assert ran.count("lcm.openstack.helm_release") == 1  # the install's

    # The artifacts ansible-runner leaves for the job.
    artifacts = tmp_path / "artifacts" / "job"
    assert (artifacts / "rc").read_text().strip() == "0"
    assert (artifacts / "status").read_text().strip() == "successful"
    events = list((artifacts / "job_events").glob("*.json"))
    assert len(events) == len(list(runner.events))
    assert any(json.loads(e.read_text()).get("event") == "playbook_on_stats" for e in events)


def test_a_failing_greenfield_reports_its_reason_in_the_job(tmp_path: Path, kubeconfig: str, ns: str) -> None:
    runner = run_flow(tmp_path, kubeconfig, "greenfield.yml",
                      {"service": "keystone", "openstack_namespace": ns, "chart": CHART, "version": "2025.1", "phase_timeout": 120,
                       # from an AWX survey textarea, values arrive as YAML text
                       "values": "simulate:\n  fail:\n    rally_test: identity tests failed\n"})
    assert (runner.status, runner.rc) == ("failed", 2)
    failed = task_results(runner, "runner_on_failed")
    final = [f["res"]["msg"] for f in failed if f["task"] == "Fail with the reason"]
    assert final and "failed and the service was removed" in final[-1] and "identity tests failed" in final[-1]
    summary = [r["res"]["msg"] for r in task_results(runner) if r["task"] == "Summary"]
    assert "greenfield flow Failed" in summary[0][0] and "service Removed" in summary[0][0]
    assert [row.split()[:2] for row in summary[0][2:5]] == [
        ["install", "Succeeded"], ["test", "Failed"], ["uninstall", "Succeeded"]]
