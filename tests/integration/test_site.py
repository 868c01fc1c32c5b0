"""A whole site on the bed: examples/site (mariadb, memcached, rabbitmq,
keystone, placement from the stock openstack-helm charts) through
playbooks/site.yml, as an operator runs it, and as AWX runs it in two job
slices. What is checked is what the cluster holds afterwards: each service's
ServiceLifecycle and the Phases its flow ran, whose times show the order.

The tests run in order and share the site's namespace, as a site's runs do.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Iterator, Sequence

import ansible_runner
import pytest
import yaml
from kubernetes import dynamic

from support import kube
from support.ansible import ROOT, run_module
from support.site_run import Site, ok, services_of, unchanged, when

pytestmark = pytest.mark.bed

GROUP = "lifecycle.openstack.org/v1alpha1"
BIN = Path(sys.executable).parent
SITE = ROOT / "examples" / "site"
SERVICES = tuple(services_of("site"))
LEVELS = {"mariadb": 0, "memcached": 0, "rabbitmq": 0, "keystone": 1, "placement": 2}


def assert_in_dependency_order(site: Site, services: Sequence[str] = SERVICES) -> None:
    """Every service's first Phase was created once each of its dependencies'
    flows had ended (Operational), and the services of level 0 ran side by side."""
    records = {s: site.lifecycle(s) for s in services}
    for name, record in records.items():
        assert record["status"]["state"] == "Operational", (name, record.get("status"))
    for name in services:
        first = site.phases(name)[0]["metadata"]["creationTimestamp"]
        for dep in (records[name]["spec"].get("dependsOn") or []):
            dep_name = dep.split("/")[-1].split(">=")[0]
            done = records[dep_name]["status"]["flow"]["completedAt"]
            assert when(first) >= when(done), f"{name} started at {first}, before {dep_name} was done at {done}"
    level0 = [records[s]["status"]["flow"] for s in services if LEVELS[s] == 0]
    assert max(when(f["startedAt"]) for f in level0) <= min(when(f["completedAt"]) for f in level0), level0


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, kubeconfig: str, dyn: dynamic.DynamicClient,
         crds: None) -> Iterator[Site]:
    namespace = f"site-{uuid.uuid4().hex[:6]}"
    yield Site(tmp_path_factory.mktemp("site") / "inventory", kubeconfig, dyn, namespace)
    if kube.get_or_none(dyn, "v1", "Namespace", namespace, None):
        dyn.resources.get(api_version="v1", kind="Namespace").delete(name=namespace)


def test_a_cycle_is_refused_before_anything_runs(site: Site) -> None:
    site.set_host_var("mariadb", "depends_on", ["placement"])
    try:
        run = site.run()
    finally:
        site.set_host_var("mariadb", "depends_on", [])
    assert run.returncode != 0
    assert "mariadb -> placement -> keystone -> mariadb" in run.stdout or \
        "placement -> keystone -> mariadb -> placement" in run.stdout or \
        "keystone -> mariadb -> placement -> keystone" in run.stdout, run.stdout[-3000:]
    assert not any(site.lifecycle(s) for s in SERVICES)


def test_check_mode_prints_the_plan_and_changes_nothing(site: Site) -> None:
    out = ok(site.run("--check"))
    for service in SERVICES:
        assert f"{service}" in out
    assert "greenfield" in out and "critical path" in out.lower()
    assert not any(site.lifecycle(s) for s in SERVICES)


def test_the_site_deploys_in_dependency_order_with_parallel_levels(site: Site) -> None:
    out = ok(site.run())
    assert_in_dependency_order(site)
    # The summary table: every service, its flow and result; keystone waited.
    table = out[out.rindex("LEVEL"):]
    for service in SERVICES:
        row = next(line for line in table.splitlines() if f" {service} " in line)
        assert "greenfield" in row and "Succeeded" in row, row
    keystone = next(line for line in table.splitlines() if " keystone " in line)
    assert "mariadb" in keystone or "rabbitmq" in keystone or "memcached" in keystone, table


def test_a_changed_keystone_version_updates_keystone_only(site: Site) -> None:
    before = {s: site.lifecycle(s)["status"]["flow"]["startedAt"] for s in SERVICES}
    tag = "quay.io/airshipit/keystone:2026.2-ubuntu_noble"
    site.set_host_var("keystone", "version", "2026.2")
    site.set_host_var("keystone", "values", {"images": {"tags": {"keystone_api": tag, "keystone_db_sync": tag}}})
    out = ok(site.run())
    keystone = site.lifecycle("keystone")["status"]
    assert (keystone["flow"]["name"], keystone["currentVersion"]) == ("update", "2026.2")
    for service in SERVICES:
        if service != "keystone":
            assert site.lifecycle(service)["status"]["flow"]["startedAt"] == before[service], service
    table = out[out.rindex("LEVEL"):]
    assert "Nothing to do" in next(line for line in table.splitlines() if " placement " in line)


def _keystone_at(site: Site, version: str) -> None:
    tag = f"quay.io/airshipit/keystone:{version}-ubuntu_noble"
    site.set_host_var("keystone", "version", version)
    site.set_host_var("keystone", "values", {"images": {"tags": {"keystone_api": tag, "keystone_db_sync": tag}}})


def _flow_running(site: Site, version: str) -> None:
    kube.wait_for(site.dyn, GROUP, "ServiceLifecycle", "keystone", site.namespace,
                  lambda r: ((r.get("status") or {}).get("flow") or {}).get("state") == "Running"
                  and r["status"]["flow"].get("targetVersion") == version, timeout=120)


def test_a_second_run_on_a_service_in_flight_is_refused_naming_the_holder(site: Site) -> None:
    _keystone_at(site, "2026.3")
    first = subprocess.Popen(site.command("--limit", "keystone"), env=site.env(), stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    try:
        _flow_running(site, "2026.3")
        second = site.run("--limit", "keystone")
    finally:
        out = first.communicate(timeout=600)[0]
    assert first.returncode == 0, out[-4000:]
    assert second.returncode != 0
    # Refused before it changed anything, naming the run that holds the service.
    assert f"keystone is held by another update flow: {socket.gethostname()}/{first.pid}" in second.stdout, \
        second.stdout[-3000:]
    assert site.lifecycle("keystone")["status"]["currentVersion"] == "2026.3"


def _kill_every_process_of(marker: str) -> int:
    """SIGKILL every process whose environment carries the marker: the
    playbook, its module processes and the Lease renewer a flow's start left
    behind (its own session), as when the machine running a job is lost."""
    killed = 0
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and marker.encode() in (proc / "environ").read_bytes():
                os.kill(int(proc.name), signal.SIGKILL)
                killed += 1
        except OSError:
            continue
    return killed


def test_a_run_lost_mid_flow_is_taken_over_by_the_next_and_the_record_says_so(site: Site) -> None:
    _keystone_at(site, "2026.4")
    marker = f"LCM_TEST_LOST_RUN={uuid.uuid4().hex}"
    env = dict(site.env(), LCM_TEST_LOST_RUN=marker.split("=", 1)[1])
    lost = subprocess.Popen(site.command("--limit", "keystone"), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _flow_running(site, "2026.4")
    assert _kill_every_process_of(marker) >= 2  # the playbook and the renewer at least
    lost.wait()
    # Nothing gave the Lease back: the next run takes it over (its holder's
    # process is gone from this host; from another host, after 60 s without
    # renewal) and finishes the update that was interrupted.
    ok(site.run("--limit", "keystone"))
    record = site.lifecycle("keystone")
    assert record["status"]["currentVersion"] == "2026.4"
    lease = kube.get_or_none(site.dyn, "coordination.k8s.io/v1", "Lease", "lcm-flow-keystone", site.namespace)
    taken = lease["metadata"]["annotations"]["lifecycle.openstack.org/taken-over-from"]
    assert taken.startswith(f"{socket.gethostname()}/{lost.pid} (update flow)"), taken
    (cond,) = [c for c in record["status"]["conditions"] if c["type"] == "FlowLeaseTakenOver"]
    assert f"taken over from {socket.gethostname()}/{lost.pid}" in cond["message"], cond


def test_a_second_run_changes_nothing(site: Site) -> None:
    out = ok(site.run())
    # Every release read against what is asked and against its objects: nothing differs.
    assert all(" nothing " in _plan_row(out, s) for s in SERVICES), out[out.index("LEVEL"):]
    assert "changed=" in out
    for line in out[out.rindex("PLAY RECAP"):].splitlines()[1:]:
        if line.strip():
            assert "changed=0" in line, line


def _plan_row(out: str, service: str) -> str:
    """The plan's row of `service` (the first table of the run's output)."""
    table = out[out.index("LEVEL"):]
    return next(line for line in table.splitlines() if f" {service} " in line)


def _revision(site: Site, release: str) -> int:
    found = site.dyn.resources.get(api_version="v1", kind="Secret").get(
        namespace=site.namespace, label_selector=f"owner=helm,name={release}").to_dict()["items"]
    return max(int(s["metadata"]["labels"]["version"]) for s in found)


def test_a_values_change_at_the_same_version_updates_that_service_alone(site: Site) -> None:
    values = site.host_vars("placement")["values"]
    site.set_host_var("placement", "values", dict(values, conf={"placement": {"DEFAULT": {"debug": True}}}))
    before = {s: site.lifecycle(s)["status"]["flow"]["startedAt"] for s in SERVICES}
    revision = _revision(site, "placement")
    # Check mode with --diff: the plan names the key, the diff shows it, nothing is written.
    out = ok(site.run("--check", "--diff"))
    row = _plan_row(out, "placement")
    assert " update " in row and "values conf.placement.DEFAULT.debug (added) changed" in row, row
    assert "the release stays at version 2026.1" in row, row
    assert "placement (deployed)" in out and "conf.placement.DEFAULT.debug" in out[out.index("placement (deployed)"):]
    for service in ("mariadb", "memcached", "rabbitmq", "keystone"):
        assert " nothing " in _plan_row(out, service), _plan_row(out, service)
    assert _revision(site, "placement") == revision
    assert {s: site.lifecycle(s)["status"]["flow"]["startedAt"] for s in SERVICES} == before
    # The run: placement's update at the same version, and no other flow.
    out = ok(site.run())
    record = site.lifecycle("placement")["status"]
    assert (record["flow"]["name"], record["flow"]["state"], record["currentVersion"]) == ("update", "Succeeded", "2026.1")
    assert _revision(site, "placement") > revision
    for service in SERVICES:
        if service != "placement":
            assert site.lifecycle(service)["status"]["flow"]["startedAt"] == before[service], service


def _replicas(site: Site, name: str) -> int:
    return site.dyn.resources.get(api_version="apps/v1", kind="Deployment").get(
        name=name, namespace=site.namespace).to_dict()["spec"]["replicas"]


def test_a_deployment_edited_by_hand_is_reported_then_corrected(site: Site) -> None:
    deployments = site.dyn.resources.get(api_version="apps/v1", kind="Deployment")
    assert _replicas(site, "keystone-api") == 1
    # An edit out of band, as `kubectl edit` or `kubectl scale` makes it.
    deployments.patch(name="keystone-api", namespace=site.namespace, body={"spec": {"replicas": 3}},
                      content_type="application/merge-patch+json", field_manager="kubectl-edit")
    before = site.lifecycle("keystone")["status"]["flow"]["startedAt"]
    version = site.lifecycle("keystone")["status"]["currentVersion"]
    out = ok(site.run())
    row = _plan_row(out, "keystone")
    assert " nothing " in row and "drift: Deployment/keystone-api spec.replicas" in row and "reported" in row, row
    unchanged(out)
    assert site.lifecycle("keystone")["status"]["flow"]["startedAt"] == before
    assert _replicas(site, "keystone-api") == 3
    # The UpdateStatus reports it too, as an insight on keystone, when it is refreshed.
    status = run_module("update_status", {"details": "all"}, site.kubeconfig)["update_status"]
    drifts = [i for i in status["insights"] if (i.get("scope") or {}).get("namespace") == site.namespace
              and i["uid"].startswith("drift-")]
    assert [i["impact"]["summary"] for i in drifts] == [
        "Deployment/keystone-api of release keystone drifted: spec.replicas"], status["insights"]
    # drift: correct: the update flow applies the release again, at its version.
    site.set_host_var("keystone", "drift", "correct")
    try:
        out = ok(site.run())
    finally:
        site.set_host_var("keystone", "drift", "report")
    row = _plan_row(out, "keystone")
    assert " reconcile " in row and "Deployment/keystone-api spec.replicas" in row, row
    assert _replicas(site, "keystone-api") == 1
    record = site.lifecycle("keystone")["status"]
    assert (record["flow"]["name"], record["flow"]["state"], record["currentVersion"]) == ("update", "Succeeded", version)
    # Corrected: the next run finds nothing to do.
    out = ok(site.run())
    assert all(" nothing " in _plan_row(out, s) for s in SERVICES), out[out.index("LEVEL"):]
    unchanged(out)


def test_a_service_others_depend_on_is_not_removed_alone(site: Site) -> None:
    run = site.run("--limit", "keystone", playbook="site_remove.yml")
    assert run.returncode != 0
    assert "keystone is depended on by placement (Operational): remove them first" in run.stdout, run.stdout[-3000:]
    assert site.lifecycle("keystone")["status"]["state"] == "Operational"


def test_the_site_is_removed_dependents_first(site: Site) -> None:
    out = ok(site.run(playbook="site_remove.yml"))
    records = {s: site.lifecycle(s) for s in SERVICES}
    assert {s: r["status"]["state"] for s, r in records.items()} == {s: "Removed" for s in SERVICES}
    # Each service's uninstall began once every service depending on it had
    # been uninstalled (its uninstall phase and its Helm release, then Removed).
    uninstalls = {s: [p for p in site.phases(s) if p["spec"]["type"] == "uninstall"][-1] for s in SERVICES}
    for name in SERVICES:
        for other in SERVICES:
            deps = [d.split("/")[-1].split(">=")[0] for d in records[other]["spec"].get("dependsOn") or []]
            if name in deps:
                done = uninstalls[other]["status"]["completedAt"]
                began = uninstalls[name]["metadata"]["creationTimestamp"]
                assert when(began) >= when(done), (name, began, other, done)
    table = out[out.rindex("LEVEL"):]
    assert all("remove" in line for line in table.splitlines()[1:6]), table


def test_two_awx_slices_keep_the_order(tmp_path: Path, kubeconfig: str, dyn: dynamic.DynamicClient,
                                       crds: None) -> None:
    """Two ansible-runner jobs, each given half the hosts as AWX slices an
    inventory, started together: the order holds across them."""
    namespace = f"site-{uuid.uuid4().hex[:6]}"
    site = Site(tmp_path / "inventory", kubeconfig, dyn, namespace)
    try:
        slices = [("mariadb", "rabbitmq", "placement"), ("memcached", "keystone")]
        threads, runners = [], []
        for number, hosts in enumerate(slices, 1):
            inventory = tmp_path / f"slice{number}"
            shutil.copytree(site.dir, inventory)
            (inventory / "inventory.yml").write_text(yaml.safe_dump(
                {"all": {"children": {"openstack_services": {"hosts": {h: None for h in hosts}}}}}))
            env = {k: v for k, v in site.env().items() if k in (
                "PATH", "HOME", "HELM_BIN", "KUBECTL_BIN", "KUBECONFIG", "K8S_AUTH_KUBECONFIG",
                "ANSIBLE_COLLECTIONS_PATH", "ANSIBLE_NOCOLOR")}
            (tmp_path / f"job{number}").mkdir()
            thread, runner = ansible_runner.run_async(
                private_data_dir=str(tmp_path / f"job{number}"), playbook=str(ROOT / "playbooks" / "site.yml"),
                inventory=str(inventory), extravars={"sliced": True}, envvars=env, forks=5, quiet=True,
                ident=f"slice{number}")
            threads.append(thread)
            runners.append(runner)
        for thread in threads:
            thread.join()
        for runner in runners:
            assert (runner.status, runner.rc) == ("successful", 0), runner.stdout.read()[-4000:]
        assert_in_dependency_order(site)
    finally:
        if kube.get_or_none(dyn, "v1", "Namespace", namespace, None):
            dyn.resources.get(api_version="v1", kind="Namespace").delete(name=namespace)
