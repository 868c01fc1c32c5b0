"""Faults on the bed. The network between the modules and a healthy
apiserver breaks, and the phase carries on: the connections go through a
loopback TCP proxy (support/tcp_proxy.py) that resets them on demand. Two
flows start on one service: the second is refused, the first ends well.
What is checked is the Phase, the ServiceLifecycle, the Helm release and the
Service's endpoints, not only the exit code. An apiserver is killed and restarted
while a phase waits (support/second_apiserver.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Dict, List

import pytest
from kubernetes import dynamic

from support import kube
from support.ansible import ROOT, module_command, module_result, run_module
from support.second_apiserver import SecondApiserver
from support.tcp_proxy import Proxy
from support.phase_args import GROUP, phase_args

pytestmark = pytest.mark.bed

BIN = Path(sys.executable).parent
EXAMPLE_CHART = str(ROOT / "examples" / "charts" / "keystone")


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


@pytest.fixture
def second_apiserver(kubeconfig: str, tmp_path: Path):
    server = SecondApiserver(kubeconfig, tmp_path)
    server.start()
    yield server
    server.stop()


def test_an_apiserver_killed_and_restarted_mid_wait_leaves_a_phase_that_succeeds(
        dyn: dynamic.DynamicClient, crds: None, namespace: str, second_apiserver: SecondApiserver) -> None:
    """The module talks to an apiserver that is SIGKILLed while it waits for
    db-sync and comes back some seconds later (its start-up time): the wait
    re-lists and carries on; no Job is created twice."""
    outcome: Dict[str, Any] = {}
    args = phase_args(namespace, values={"jobs": {"db_sync": {"duration": "25s"}}})
    run = threading.Thread(target=lambda: outcome.update(
        run_module("phase", args, kubeconfig=str(second_apiserver.kubeconfig))))
    run.start()
    try:
        # The wait is under way once db-sync runs (the module created it and watches it).
        kube.wait_for(dyn, "batch/v1", "Job", "ks-db-sync", namespace,
                      lambda j: bool((j.get("status") or {}).get("active")), timeout=180)
        running = dyn.resources.get(api_version=GROUP, kind="Phase").get(namespace=namespace).to_dict()["items"]
        assert [p["status"]["state"] for p in running] == ["Running"]
        second_apiserver.kill()
        # Down until it is up again: its start-up takes seconds, every call meanwhile is refused.
        second_apiserver.start()
        job = dyn.resources.get(api_version="batch/v1", kind="Job").get(name="ks-db-sync", namespace=namespace)
        assert not job.to_dict()["status"].get("succeeded")  # the outage was inside the wait
    finally:
        run.join(timeout=600)

    assert second_apiserver.kills == 1
    assert outcome.get("failed") is None, outcome.get("msg")
    assert outcome["changed"] is True and outcome["phase"]["state"] == "Succeeded"
    phase = dyn.resources.get(api_version=GROUP, kind="Phase").get(
        name=outcome["phase"]["name"], namespace=namespace).to_dict()
    assert phase["status"]["state"] == "Succeeded"
    jobs = [o["name"] for o in phase["status"]["objects"] if o["kind"] == "Job"]
    assert "ks-db-sync" in jobs
    for job in jobs:  # each Job created once, one pod: nothing was run again
        live = dyn.resources.get(api_version="batch/v1", kind="Job").get(name=job, namespace=namespace).to_dict()
        assert live["metadata"]["labels"]["lifecycle.openstack.org/phase"] == phase["metadata"]["name"]
        assert len(_pods_of(dyn, namespace, job)) == 1, job
    record = dyn.resources.get(api_version=GROUP, kind="ServiceLifecycle").get(
        name="svc", namespace=namespace).to_dict()["status"]
    assert record["history"][-1]["result"] == "Succeeded" and record["currentPhase"] == ""


def _descendant(pid: int, needle: str) -> int:
    """The process under `pid` whose command line contains `needle` (the module)."""
    children = {pid}
    for _round in range(10):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8") as stat:
                    parent = int(stat.read().rsplit(")", 1)[1].split()[1])
                with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                    argv = cmdline.read().decode(errors="replace")
            except (OSError, ValueError, IndexError):
                continue
            if parent in children:
                children.add(int(entry))
                if needle in argv and not argv.startswith("/bin/sh"):  # the module, not its shell
                    return int(entry)
    raise AssertionError(f"no process running {needle} under {pid}")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL], ids=["SIGTERM", "SIGINT", "SIGKILL"])
def test_a_signal_mid_wait_leaves_the_phase_running_and_a_rerun_attaches(
        dyn: dynamic.DynamicClient, kubeconfig: str, crds: None, namespace: str, sig: signal.Signals) -> None:
    """A cancelled job (AWX sends SIGINT, then SIGTERM) or Ctrl-C: the module
    records why on the Phase, which stays Running with its Jobs; the re-run
    attaches and finishes them, creating nothing twice."""
    args = phase_args(namespace, values={"jobs": {"db_sync": {"duration": "15s"}}})
    cmd, env = module_command("phase", args, kubeconfig)
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        kube.wait_for(dyn, "batch/v1", "Job", "ks-db-sync", namespace,
                      lambda j: bool((j.get("status") or {}).get("active")), timeout=180)
        os.kill(_descendant(proc.pid, "AnsiballZ_phase"), sig)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    result = module_result(cmd, proc.returncode, out, err)
    assert result["failed"] is True
    (live,) = dyn.resources.get(api_version=GROUP, kind="Phase").get(namespace=namespace).to_dict()["items"]
    name = live["metadata"]["name"]
    assert live["status"]["state"] == "Running"
    if sig == signal.SIGKILL:  # nothing can be said; the Phase is found Running all the same
        assert live["status"]["message"].startswith("wave ")
    else:
        assert result["changed"] is True and result["phase"]["name"] == name
        assert result["msg"] == (f"interrupted by {sig.name}: the Phase {name} stays Running and its Jobs go on; "
                                 "run the same phase again to attach to it, or delete it (state: absent) to stop them")
        assert "Traceback" not in result["_raw"] and live["status"]["message"] == result["msg"]
    db_sync = dyn.resources.get(api_version="batch/v1", kind="Job").get(name="ks-db-sync", namespace=namespace)
    uid = db_sync.to_dict()["metadata"]["uid"]
    assert not db_sync.to_dict()["spec"].get("suspend")  # its work goes on

    again = run_module("phase", args, kubeconfig)
    assert again.get("failed") is None, again.get("msg")
    assert again["phase"]["name"] == name and again["phase"]["state"] == "Succeeded"
    after = dyn.resources.get(api_version="batch/v1", kind="Job").get(name="ks-db-sync", namespace=namespace)
    assert after.to_dict()["metadata"]["uid"] == uid and len(_pods_of(dyn, namespace, "ks-db-sync")) == 1


def test_two_runs_of_one_phase_started_together_one_runs_it_the_other_is_refused(
        dyn: dynamic.DynamicClient, kubeconfig: str, crds: None, namespace: str) -> None:
    """Two operators (or a retried job) start the same phase at once. One runs
    it; the other is refused at once, naming it, instead of both driving one
    Phase."""
    args = phase_args(namespace, values={"jobs": {"db_sync": {"duration": "10s"}}})
    runs = [module_command("phase", args, kubeconfig), module_command("phase", args, kubeconfig)]
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for cmd, env in runs]
    results = [module_result(cmd, p.returncode, *p.communicate(timeout=600))
               for (cmd, _env), p in zip(runs, procs)]
    won = [r for r in results if not r.get("failed")]
    lost = [r for r in results if r.get("failed")]
    assert len(won) == 1 and len(lost) == 1, [r.get("msg") for r in results]
    assert won[0]["changed"] is True and won[0]["phase"]["state"] == "Succeeded"
    assert lost[0]["changed"] is False
    assert lost[0]["msg"].startswith("svc is held by another install phase: ") or \
        lost[0]["msg"].startswith("svc: another run changed the flow lease lcm-flow-svc at the same moment"), \
        lost[0]["msg"]
    (phase,) = dyn.resources.get(api_version=GROUP, kind="Phase").get(namespace=namespace).to_dict()["items"]
    assert phase["status"]["state"] == "Succeeded"
    for job in [o["name"] for o in phase["status"]["objects"] if o["kind"] == "Job"]:
        assert len(_pods_of(dyn, namespace, job)) == 1, job  # run once
    # Given back once the winner's run has ended (by its renewer, which sees the run end).
    kube.wait_for(dyn, "coordination.k8s.io/v1", "Lease", "lcm-flow-svc", namespace,
                  lambda lease: not lease["spec"].get("holderIdentity"), timeout=30)


# -- two flows on one service ---------------------------------------------------------

def _flow(kubeconfig: str, playbook: str, namespace: str, **extra: Any) -> List[str]:
    variables = {"service": "keystone", "openstack_namespace": namespace, "chart": EXAMPLE_CHART, "phase_timeout": 180}
    variables.update(extra)
    return [str(BIN / "ansible-playbook"), "-i", str(ROOT / "examples" / "inventory.yml"),
            str(ROOT / "playbooks" / playbook), "-e", json.dumps(variables)]


def _first_failure(out: str, around: int = 2500) -> str:
    """What a failed playbook said first: the task that failed, not only the
    rescue that followed it (its last lines)."""
    at = min((i for i in (out.find("fatal:"), out.find("[ERROR]")) if i >= 0), default=-1)
    head = out[max(0, at - around):at + around] if at >= 0 else ""
    return f"{head}\n...\n{out[-2500:]}"


def _env(kubeconfig: str) -> Dict[str, str]:
    return dict(os.environ, KUBECONFIG=kubeconfig, K8S_AUTH_KUBECONFIG=kubeconfig, ANSIBLE_NOCOLOR="1",
                ANSIBLE_FORCE_COLOR="0", ANSIBLE_COLLECTIONS_PATH=str(ROOT / "build" / "collections"))


def test_a_second_update_of_a_service_is_refused_while_the_first_runs(
        dyn: dynamic.DynamicClient, kubeconfig: str, crds: None, namespace: str) -> None:
    env = _env(kubeconfig)
    first = subprocess.run(_flow(kubeconfig, "greenfield.yml", namespace, version="2025.1"), env=env,
                           capture_output=True, text=True, check=False)
    assert first.returncode == 0, first.stdout[-3000:]
    slow = {"simulate": {"duration": {"db_sync": "15s"}}}
    run_a = subprocess.Popen(_flow(kubeconfig, "update.yml", namespace, version="2025.2", values=slow), env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lease = kube.wait_for(dyn, "coordination.k8s.io/v1", "Lease", "lcm-flow-keystone", namespace,
                              lambda o: bool((o.get("spec") or {}).get("holderIdentity")), timeout=120)
        run_b = subprocess.run(_flow(kubeconfig, "update.yml", namespace, version="2025.3"), env=env,
                               capture_output=True, text=True, check=False)
        out_a, _err = run_a.communicate(timeout=600)
    finally:
        if run_a.poll() is None:
            run_a.kill()
    holder = lease["spec"]["holderIdentity"]
    assert run_b.returncode != 0
    assert f"keystone is held by another update flow: {holder}, since" in run_b.stdout
    assert run_a.returncode == 0, out_a[-4000:]

    # A's update is the one that happened; B changed nothing.
    record = dyn.resources.get(api_version=GROUP, kind="ServiceLifecycle").get(
        name="keystone", namespace=namespace).to_dict()["status"]
    assert (record["state"], record["currentVersion"]) == ("Operational", "2025.2")
    assert record["flow"]["name"] == "update" and record["flow"]["state"] == "Succeeded"
    releases = dyn.resources.get(api_version="v1", kind="Secret").get(
        namespace=namespace, label_selector="owner=helm,name=keystone").to_dict()["items"]
    assert len(releases) == 2  # greenfield, then A's upgrade
    slices = dyn.resources.get(api_version="discovery.k8s.io/v1", kind="EndpointSlice").get(
        namespace=namespace, label_selector="kubernetes.io/service-name=keystone-api").to_dict()["items"]
    assert any((e.get("conditions") or {}).get("ready") for s in slices for e in s.get("endpoints") or [])
    # A gave the Lease back when it ended: the next flow may start at once.
    after = dyn.resources.get(api_version="coordination.k8s.io/v1", kind="Lease").get(
        name="lcm-flow-keystone", namespace=namespace).to_dict()
    assert not after["spec"].get("holderIdentity")


def test_a_greenfield_run_again_after_its_traffic_step_failed_goes_on_from_there(
        dyn: dynamic.DynamicClient, kubeconfig: str, crds: None, namespace: str) -> None:
    """Installed and tested, the rollout failed (its target Service was
    misnamed). Run again with the target fixed, the flow continues: the
    database jobs do not run again, the traffic is rolled out."""
    env = _env(kubeconfig)
    track = {"traffic_mode": "track", "version": "2025.1"}
    failed = subprocess.run(_flow(kubeconfig, "greenfield.yml", namespace, traffic_target="keystone-nope", **track),
                            env=env, capture_output=True, text=True, check=False)
    assert failed.returncode != 0 and "Service keystone-nope not found" in failed.stdout, failed.stdout[-3000:]
    record = dyn.resources.get(api_version=GROUP, kind="ServiceLifecycle").get(
        name="keystone", namespace=namespace).to_dict()["status"]
    assert (record["state"], record["flow"]["state"]) == ("Failed", "Failed")
    jobs = {j["metadata"]["name"]: j["metadata"]["uid"] for j in dyn.resources.get(
        api_version="batch/v1", kind="Job").get(namespace=namespace).to_dict()["items"]}
    assert any(name.endswith("db-sync") for name in jobs)

    again = subprocess.run(_flow(kubeconfig, "greenfield.yml", namespace, **track), env=env,
                           capture_output=True, text=True, check=False)
    assert again.returncode == 0, _first_failure(again.stdout)
    now = {j["metadata"]["name"]: j["metadata"]["uid"] for j in dyn.resources.get(
        api_version="batch/v1", kind="Job").get(namespace=namespace).to_dict()["items"]}
    assert now == jobs  # not one Job deleted, re-created or added
    after = dyn.resources.get(api_version=GROUP, kind="ServiceLifecycle").get(
        name="keystone", namespace=namespace).to_dict()["status"]
    assert (after["state"], after["currentVersion"]) == ("Operational", "2025.1")
    assert after["flow"]["state"] == "Succeeded" and after["flow"]["startedAt"] == record["flow"]["startedAt"]
    types = [e["type"] for e in after["history"] if e["name"] in after["flow"]["phases"]]
    assert types == ["install", "test", "trafficrollout"]
    slices = dyn.resources.get(api_version="discovery.k8s.io/v1", kind="EndpointSlice").get(
        namespace=namespace, label_selector="kubernetes.io/service-name=keystone-api").to_dict()["items"]
    assert any((e.get("conditions") or {}).get("ready") for s in slices for e in s.get("endpoints") or [])


def test_a_whole_update_flow_with_connections_dropped_every_few_seconds_succeeds(
        dyn: dynamic.DynamicClient, kubeconfig: str, crds: None, namespace: str, tmp_path: Path) -> None:
    """Every module and every Helm command of the update goes through the
    proxy, which cuts all connections every 3 s: the drain, the backup, the
    Helm upgrade and its wait, db-sync, the test and the rollout. The flow
    Succeeds with no rollback."""
    first = subprocess.run(_flow(kubeconfig, "greenfield.yml", namespace, version="2025.1"), env=_env(kubeconfig),
                           capture_output=True, text=True, check=False)
    assert first.returncode == 0, first.stdout[-3000:]
    through = tmp_path / "kubeconfig"
    proxy = Proxy.for_kubeconfig(kubeconfig, through)
    stop = proxy.drop_every(3.0)
    slow = {"simulate": {"duration": {"db_sync": "12s"}}}
    try:
        update = subprocess.run(_flow(str(through), "update.yml", namespace, version="2025.2", values=slow),
                                env=_env(str(through)), capture_output=True, text=True, check=False)
    finally:
        stop.set()
        proxy.close()
    assert update.returncode == 0, _first_failure(update.stdout)
    assert proxy.dropped >= 5  # connections were really cut, again and again

    record = dyn.resources.get(api_version=GROUP, kind="ServiceLifecycle").get(
        name="keystone", namespace=namespace).to_dict()["status"]
    assert (record["state"], record["currentVersion"]) == ("Operational", "2025.2")
    assert record["flow"]["name"] == "update" and record["flow"]["state"] == "Succeeded"
    types = [e["type"] for e in record["history"] if e["name"] in record["flow"]["phases"]]
    assert "rollback" not in types and "upgrade" in types
    assert all(e["result"] == "Succeeded" for e in record["history"] if e["name"] in record["flow"]["phases"])
    releases = dyn.resources.get(api_version="v1", kind="Secret").get(
        namespace=namespace, label_selector="owner=helm,name=keystone").to_dict()["items"]
    # One revision made by the update, or, when a drop cut the Helm upgrade
    # itself, the failed revisions it left and the one run again on top of them
    # (helm/interrupted.py), each said as a warning.
    statuses = [r["metadata"]["labels"]["status"] for r in sorted(releases, key=lambda r: int(r["metadata"]["labels"]["version"]))]
    assert statuses[0] == "superseded" and statuses[-1] == "deployed" and set(statuses[1:-1]) <= {"failed"}, statuses
    assert len(statuses) == 2 or "ran it again" in " ".join((update.stdout + update.stderr).split()), statuses
    slices = dyn.resources.get(api_version="discovery.k8s.io/v1", kind="EndpointSlice").get(
        namespace=namespace, label_selector="kubernetes.io/service-name=keystone-api").to_dict()["items"]
    assert any((e.get("conditions") or {}).get("ready") for s in slices for e in s.get("endpoints") or [])
