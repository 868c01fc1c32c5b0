"""The compute kit as one site on the bed: examples/compute-kit (mariadb,
memcached, rabbitmq, openvswitch, keystone, placement, libvirt, neutron,
nova, cinder and barbican from the stock openstack-helm charts, each
OpenStack service with openstack-helm's values file of its release) through
playbooks/site.yml and site_remove.yml.

The order comes from the charts: no depends_on ties nova and neutron, whose
pods wait for each other's; they deploy side by side with libvirt. What is
checked is what the cluster holds afterwards: the ServiceLifecycles and the
Phases, whose times show the order. The tests run in order on one site.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import uuid
from typing import Dict, Iterator, List

import pytest
from kubernetes import dynamic

from support import bed_faults, kube, openstack_helm
from support.endpoint_watch import EndpointWatch
from support.pod_events import PodEvents
from support.site_run import GROUP, Site, ok, unchanged, when

pytestmark = pytest.mark.bed

OPENSTACK = ("keystone", "placement", "libvirt", "neutron", "nova", "cinder", "barbican")
TOGETHER = ("libvirt", "neutron", "nova")
WITH_DATABASE = ("keystone", "placement", "nova", "neutron", "cinder", "barbican")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, kubeconfig: str, dyn: dynamic.DynamicClient,
         crds: None) -> Iterator[Site]:
    namespace = f"kit-{uuid.uuid4().hex[:6]}"
    yield Site(tmp_path_factory.mktemp("kit") / "inventory", kubeconfig, dyn, namespace, example="compute-kit")
    if kube.get_or_none(dyn, "v1", "Namespace", namespace, None):
        dyn.resources.get(api_version="v1", kind="Namespace").delete(name=namespace)


def _flows(site: Site) -> Dict[str, Dict[str, str]]:
    return {s: site.lifecycle(s)["status"]["flow"] for s in site.services}


def test_the_plan_reads_the_order_from_the_charts(site: Site) -> None:
    assert not any("neutron" in str(site.host_vars(s).get("depends_on")) for s in ("nova", "libvirt"))
    assert not any(d in str(site.host_vars("neutron").get("depends_on")) for d in ("nova", "libvirt"))
    # One line a row, however the caller's environment sets the callback's result format.
    out = ok(site.run("--check", env={"ANSIBLE_CALLBACK_RESULT_FORMAT": "json"}))
    # The plan's rows: LEVEL SERVICE FLOW VERSION AFTER BESIDE REASON
    rows = {}
    for line in out.splitlines():  # a JSON or YAML callback's list of lines
        cells = line.strip().lstrip("-").strip().strip("'\",").split()
        if len(cells) > 5 and cells[0].isdigit() and cells[1] in site.services:
            rows[cells[1]] = cells
    beside = (rows["nova"][5], rows["neutron"][5], rows["libvirt"][5])
    assert beside == ("libvirt,neutron", "libvirt,nova", "neutron,nova"), rows
    # its agents wait for openvswitch's pods, at the version this run deploys
    assert "openvswitch>=2026.1.0" in rows["neutron"][4].split(","), rows["neutron"]
    assert rows["nova"][0] == rows["neutron"][0] == rows["libvirt"][0], rows
    assert not any(site.lifecycle(s) for s in site.services)  # check mode wrote nothing


def test_the_kit_deploys_side_by_side_in_the_order_the_pods_need(site: Site) -> None:
    ok(site.run())
    records = {s: site.lifecycle(s) for s in site.services}
    assert {s: r["status"]["state"] for s, r in records.items()} == {s: "Operational" for s in site.services}
    flows = _flows(site)
    # nova, neutron and libvirt ran at once: each started before the others had ended.
    assert max(when(flows[s]["startedAt"]) for s in TOGETHER) < min(when(flows[s]["completedAt"]) for s in TOGETHER)
    # What each waits for by its charts had ended before its flow started.
    for name, record in records.items():
        for dep in record["spec"].get("dependsOn") or []:
            dep_name = dep.split("/")[-1].split(">=")[0]
            assert dep_name not in TOGETHER or name not in TOGETHER, (name, dep)
            assert when(flows[name]["startedAt"]) >= when(flows[dep_name]["completedAt"]), (name, dep_name)
    # The node agents, which render no Service, took no traffic step.
    for agent in ("openvswitch", "libvirt"):
        assert not [p for p in site.phases(agent) if p["spec"]["type"].startswith("traffic")], agent


def test_a_release_two_steps_on_is_refused_naming_the_one_between(site: Site) -> None:
    """2025.2 -> 2026.2 skips 2026.1, which is no SLURP jump: the plan refuses
    it for every OpenStack service before anything is read from a release or
    written, and names the release to pass through."""
    before = {s: site.lifecycle(s)["metadata"]["resourceVersion"] for s in site.services}
    # The refusal on one line, whatever result format the caller's environment sets.
    run = site.run("-e", "openstack_release=2026.2", env={"ANSIBLE_CALLBACK_RESULT_FORMAT": "json"})
    assert run.returncode != 0, run.stdout[-3000:]
    refusal = next((line for line in run.stdout.splitlines() if "site plan refused" in line), "")
    for name in ("keystone", "nova", "neutron"):
        assert f"{name} ({site.namespace}): 2025.2 -> 2026.2 is not a supported upgrade" in refusal, run.stdout[-3000:]
    assert "pass through 2026.1 first" in refusal
    assert "mariadb (" not in refusal and "openvswitch (" not in refusal  # no OpenStack releases: not checked
    assert {s: site.lifecycle(s)["metadata"]["resourceVersion"] for s in site.services} == before


def _updating_to(version: str):
    def updating(record: Dict) -> bool:
        flow = (record.get("status") or {}).get("flow") or {}
        return (flow.get("name"), flow.get("targetVersion"), flow.get("state")) == ("update", version, "Running")
    return updating


def test_every_openstack_service_moves_to_the_next_release(site: Site) -> None:
    """In order, rolling where the project supports it: keystone's and nova's
    APIs keep a ready endpoint throughout; nova's online data migrations run
    once every nova workload runs the new release, again while they report
    more to do; barbican, which does not roll, is drained."""
    bed_faults.set_fault(site.dyn, site.namespace, "nova-db-sync-online",
                         "exit 1: 120 rows migrated, more to do\nexit 0: nothing left to migrate")
    try:
        with EndpointWatch(site.dyn, site.namespace, ["keystone-api", "nova-api"]) as endpoints, \
                PodEvents(site.dyn, site.namespace, "application=nova") as nova_pods:
            # SIGKILLed once placement's update is under way (keystone's has ended), then run again.
            killed = subprocess.Popen(site.command("-e", "openstack_release=2026.1"), env=site.env(),
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            try:
                kube.wait_for(site.dyn, GROUP, "ServiceLifecycle", "placement", site.namespace, _updating_to("2026.1"),
                              timeout=1200)
            finally:
                os.killpg(killed.pid, signal.SIGKILL)
                killed.wait()
            ok(site.run("-e", "openstack_release=2026.1"))
    finally:
        bed_faults.clear_fault(site.dyn, site.namespace, "nova-db-sync-online")
    for api in ("keystone-api", "nova-api"):
        assert endpoints.min_ready(api) >= 1 and not endpoints.zero_spans(api), (api, endpoints.timeline(api))
    # What each update's flow ran, from its record (Phase names are <release>-<type>-<hash>).
    strategies = {name: [p.rsplit("-", 2)[1] for p in site.lifecycle(name)["status"]["flow"].get("phases") or []]
                  for name in OPENSTACK}
    for name in ("keystone", "placement", "nova", "neutron", "cinder"):
        assert "contract" in strategies[name] and "trafficdrain" not in strategies[name], (name, strategies[name])
    assert "trafficdrain" in strategies["barbican"] and "contract" not in strategies["barbican"]
    # The run killed and the run again upgraded each service once: the second attached to what the first began.
    for name in OPENSTACK:
        upgrades = [p for p in site.phases(name) if p["spec"]["type"] == "upgrade"
                    and p["spec"].get("targetVersion") == "2026.1"]
        assert [p["status"]["state"] for p in upgrades] == ["Succeeded"], (name, upgrades)
    online = kube.get_or_none(site.dyn, "batch/v1", "Job", "nova-db-sync-online", site.namespace)
    assert online and online["status"].get("succeeded") == 1 and online["status"].get("failed") == 1, online["status"]
    old = [p for p in nova_pods.workloads() if "2025.2" in p.image]
    assert old and all(p.gone for p in old), nova_pods.workloads()
    assert when(online["metadata"]["creationTimestamp"]) >= max(p.gone for p in old)
    for name in OPENSTACK:
        status = site.lifecycle(name)["status"]
        assert (status["state"], status["currentVersion"], status["flow"]["name"]) == (
            "Operational", "2026.1", "update"), (name, status)
    for name in ("mariadb", "memcached", "rabbitmq", "openvswitch"):
        assert site.lifecycle(name)["status"]["flow"]["name"] == "greenfield", name
    # In order: each update started once the updates it waits for had ended
    # at the new release, not while they ran (both read from the records).
    flows = _flows(site)
    for name in OPENSTACK:
        for dep in site.lifecycle(name)["spec"].get("dependsOn") or []:
            dep_name = dep.split("/")[-1].split(">=")[0]
            if dep_name in OPENSTACK:
                assert ">=" not in dep, (name, dep)  # the record keeps what is declared, not the run's versions
                assert when(flows[name]["startedAt"]) >= when(flows[dep_name]["completedAt"]), (name, dep_name)
    # ... and what waits for nothing of the other ran side by side.
    assert max(when(flows[s]["startedAt"]) for s in TOGETHER) < min(when(flows[s]["completedAt"]) for s in TOGETHER)


def _single(site: Site, playbook: str, service: str, release: str) -> subprocess.Popen:
    """One service's own flow (playbooks/<playbook>), as an operator runs it outside the site."""
    given = site.host_vars(service)
    extra = {"service": service, "openstack_namespace": site.namespace, "chart": str(openstack_helm.CACHE / service),
             "version": release, "values": given.get("values") or {},
             "values_files": [str(openstack_helm.values_override(service, release))]}
    command = site.command("-e", json.dumps(extra), playbook=playbook)
    return subprocess.Popen(command, env=site.env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _all(runs: Dict[str, subprocess.Popen]) -> None:
    outs = {name: run.communicate()[0] for name, run in runs.items()}
    failed = {name: [line[:1500] for line in out.splitlines() if "fatal:" in line or "FAILED" in line] or out[-3000:]
              for name, out in outs.items() if runs[name].returncode != 0}
    assert failed == {}, failed


def test_each_service_rolls_back_restoring_its_databases_and_updates_again_on_its_own(site: Site) -> None:
    """playbooks/rollback.yml and update.yml, one service each: every service with a
    database returns to 2025.2 with its databases restored (nova's three), all at
    once, then moves to 2026.1 again with a new backup."""
    _all({name: _single(site, "rollback.yml", name, "2025.2") for name in WITH_DATABASE})
    for name in WITH_DATABASE:
        status = site.lifecycle(name)["status"]
        assert (status["state"], status["currentVersion"], status["flow"]["name"], status["flow"]["state"]) == (
            "Operational", "2025.2", "rollback", "Succeeded"), (name, status)
        rollback = [p for p in site.phases(name) if p["spec"]["type"] == "rollback"][-1]
        restored = [o for o in rollback["status"].get("objects") or [] if o["kind"] == "Job"]
        assert restored and all(o["state"] == "Current" for o in restored), (name, restored)
    nova = [p for p in site.phases("nova") if p["spec"]["type"] == "upgrade"][-1]
    assert sorted(nova["status"]["backupSource"]["databases"]) == ["nova", "nova_cell0", "nova_cell1"]
    # An update's start refuses while a service it depends on is not Operational (no
    # dependency_timeout given): run them as an operator does, the order's levels in turn.
    for level in (("keystone",), ("placement", "cinder", "barbican"), ("nova", "neutron")):
        _all({name: _single(site, "update.yml", name, "2026.1") for name in level})
    for name in WITH_DATABASE:
        status = site.lifecycle(name)["status"]
        assert (status["state"], status["currentVersion"], status["flow"]["name"]) == (
            "Operational", "2026.1", "update"), (name, status)


def test_a_second_run_changes_nothing(site: Site) -> None:
    unchanged(ok(site.run("-e", "openstack_release=2026.1")))


def test_the_kit_is_removed_dependents_first(site: Site) -> None:
    ok(site.run("-e", "openstack_release=2026.1", playbook="site_remove.yml"))
    records = {s: site.lifecycle(s) for s in site.services}
    assert {s: r["status"]["state"] for s, r in records.items()} == {s: "Removed" for s in site.services}
    uninstall: Dict[str, List[str]] = {}
    for name in site.services:
        ended = [p for p in site.phases(name) if p["spec"]["type"] == "uninstall"]
        uninstall[name] = [ended[-1]["metadata"]["creationTimestamp"], ended[-1]["status"]["completedAt"]]
    # keystone went once everything that waits for it had gone; openvswitch after neutron (its agents).
    for dependent in ("placement", "nova", "neutron", "cinder", "barbican"):
        assert when(uninstall["keystone"][0]) >= when(uninstall[dependent][1]), dependent
    assert when(uninstall["openvswitch"][0]) >= when(uninstall["neutron"][1])
