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

import uuid
from typing import Dict, Iterator, List

import pytest
from kubernetes import dynamic

from support import kube
from support.site_run import Site, ok, unchanged, when

pytestmark = pytest.mark.bed

OPENSTACK = ("keystone", "placement", "libvirt", "neutron", "nova", "cinder", "barbican")
TOGETHER = ("libvirt", "neutron", "nova")


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
    out = ok(site.run("--check"))
    rows = {line.split()[1]: line for line in out.splitlines() if line.strip().startswith(('"0 ', '"1 ', '"2 ', '"3 '))
            for line in [line.strip().strip('",')]}
    assert "libvirt,neutron" in rows["nova"] and "libvirt,nova" in rows["neutron"], rows
    assert "openvswitch" in rows["neutron"].split()[4], rows["neutron"]  # neutron's agents wait for its pods
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
    # neutron's install phase said which of its waits nova's flow, beside it, satisfies.
    install = [p for p in site.phases("neutron") if p["spec"]["type"] == "install"][-1]
    assert install["status"]["state"] == "Succeeded"


def test_every_openstack_service_moves_to_the_next_release(site: Site) -> None:
    ok(site.run("-e", "openstack_release=2026.1"))
    for name in OPENSTACK:
        status = site.lifecycle(name)["status"]
        assert (status["state"], status["currentVersion"], status["flow"]["name"]) == (
            "Operational", "2026.1", "update"), (name, status)
    for name in ("mariadb", "memcached", "rabbitmq", "openvswitch"):
        assert site.lifecycle(name)["status"]["flow"]["name"] == "greenfield", name


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
    # keystone went once everything that waits for it had gone; openvswitch after neutron and libvirt.
    for dependent in ("placement", "nova", "neutron", "cinder", "barbican"):
        assert when(uninstall["keystone"][0]) >= when(uninstall[dependent][1]), dependent
    for dependent in ("neutron", "libvirt"):
        assert when(uninstall["openvswitch"][0]) >= when(uninstall[dependent][1]), dependent
