"""plugins/module_utils/site/chart_graph.py and site/order.py: a site's order
read from what its charts' pods wait for, on the stock openstack-helm charts."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import SiteError
from ansible_collections.lcm.openstack.plugins.module_utils.helm.render import Rendered
from ansible_collections.lcm.openstack.plugins.module_utils.site.chart_graph import components, derive
from ansible_collections.lcm.openstack.plugins.module_utils.site.plan import site_plan
from support.paths import UNIT_FIXTURES

STOCK: Dict[str, List[Dict[str, Any]]] = yaml.safe_load((UNIT_FIXTURES / "site" / "stock_renders.yaml").read_text())
NS = "openstack"


def _renders(charts: Mapping[str, List[Dict[str, Any]]], namespace: str = NS) -> Dict[Any, List[Rendered]]:
    return {(namespace, name): [Rendered(obj=o) for o in objects] for name, objects in charts.items()}


def _glance_is_there(dep: Any) -> bool:
    """A cluster that runs glance and a Ceph client already (none of the stock test charts renders them)."""
    return (dep.kind, dep.name) in {("Service", "glance-api"), ("ConfigMap", "ceph-etc"),
                                    ("Secret", "pvc-ceph-client-key")}


def _by(name: str) -> Any:
    return (NS, name)


def test_the_compute_kit_depends_on_itself_at_the_pod_level_only() -> None:
    graph = derive(_renders(STOCK), _glance_is_there)
    edges = {k[1]: sorted(d[1] for d in v) for k, v in graph.edges.items()}
    assert edges["nova"] == ["keystone", "libvirt", "mariadb", "neutron", "rabbitmq"]
    assert edges["neutron"] == ["keystone", "mariadb", "memcached", "nova", "openvswitch", "rabbitmq"]
    assert edges["libvirt"] == ["neutron"]
    assert edges["openvswitch"] == [] and edges["mariadb"] == []
    assert edges["placement"] == ["keystone", "mariadb"]
    # why, pod by pod
    assert graph.edges[_by("neutron")][_by("nova")][:2] == [
        "DaemonSet neutron-dhcp-agent-default waits for Service openstack/nova-api (DEPENDENCY_SERVICE)",
        "DaemonSet neutron-l3-agent-default waits for Service openstack/nova-api (DEPENDENCY_SERVICE)"]
    assert graph.edges[_by("nova")][_by("libvirt")][0].startswith(
        "DaemonSet nova-compute-default waits for Pod openstack/labelled application=libvirt,component=libvirt")
    # what neutron's phases will wait for that nova's flow creates
    assert graph.provided[_by("neutron")][("Service", NS, "nova-api")] == _by("nova")
    assert graph.provided[_by("nova")][("Service", NS, "neutron-server")] == _by("neutron")
    groups = components({k: list(v) for k, v in graph.edges.items()})
    assert [_by("libvirt"), _by("neutron"), _by("nova")] in groups
    assert all(len(g) == 1 for g in groups if _by("nova") not in g)


def test_a_dependency_nothing_will_create_is_refused_naming_both_ends() -> None:
    with pytest.raises(SiteError) as err:
        derive(_renders(STOCK), lambda dep: dep.kind != "Service")
    assert str(err.value).startswith(
        "nova: DaemonSet nova-compute-default waits for Service openstack/glance-api (DEPENDENCY_SERVICE), which no "
        "service of the site renders and the cluster does not have; nova: Pod nova-test waits for Service "
        "openstack/glance-api")
    assert "change dependencies.static in the waiting service's values" in str(err.value)
    # Another run of the site (an AWX slice) may deploy it: left to the init container.
    assert derive(_renders(STOCK), lambda dep: False, external=True).edges


def test_a_cycle_of_pods_is_refused_naming_the_pods() -> None:
    def chart(name: str, waits_for: str) -> List[Dict[str, Any]]:
        labels = {"application": name, "component": "api"}
        env = [{"name": "DEPENDENCY_SERVICE", "value": f"{NS}:{waits_for}-api"}]
        return [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"{name}-api"}, "spec": {"selector": labels}},
                {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"{name}-api"},
                 "spec": {"template": {"metadata": {"labels": labels},
                                       "spec": {"initContainers": [{"name": "init", "env": env}]}}}}]
    with pytest.raises(SiteError, match=r"the site's pods wait for each other in a cycle: Deployment a-api \(a\) "
                                        r"waits for Deployment b-api \(b\) waits for Deployment a-api \(a\)"):
        derive(_renders({"a": chart("a", "b"), "b": chart("b", "a")}))


def _site(**extra: Any) -> List[Dict[str, Any]]:
    services = [{"service": name, "version": "2025.2"} for name in STOCK]
    for service in services:
        service.update(extra.get(service["service"], {}))
    return services


def _plan(services: List[Dict[str, Any]], action: str = "deploy") -> Dict[str, Dict[str, Any]]:
    result = site_plan(services, action, False, lambda namespaces: {},
                       lambda site: derive(_renders(STOCK), _glance_is_there))
    return {s["service"]: dict(s, levels=result["levels"], critical=result["critical_path"])
            for s in result["services"]}


def test_the_plan_deploys_nova_neutron_and_libvirt_side_by_side() -> None:
    plan = _plan(_site(nova={"expected_duration": 300}))
    assert plan["nova"]["levels"] == [["mariadb", "memcached", "openvswitch", "rabbitmq"], ["keystone"],
                                      ["barbican", "cinder", "libvirt", "neutron", "nova", "placement"]]
    assert plan["nova"]["together_with"] == ["libvirt", "neutron"]
    # the three start together, once what any of them waits for outside the group is up,
    # at the version this run deploys
    together = ["keystone", "mariadb", "memcached", "openvswitch", "rabbitmq"]
    assert plan["nova"]["wait_for"] == plan["neutron"]["wait_for"] == plan["libvirt"]["wait_for"] == together
    assert plan["nova"]["wait_at"] == plan["libvirt"]["wait_at"] == {s: "2025.2" for s in together}
    assert {"kind": "Service", "namespace": NS, "name": "nova-api", "service": "nova"} in plan["neutron"]["provided"]
    assert plan["nova"]["provided"] == [{"kind": "Service", "namespace": NS, "name": "neutron-server", "service": "neutron"}]
    derived = {d["service"]: d for d in plan["nova"]["depends_on"]}
    assert derived["neutron"]["derived"] and derived["neutron"]["reasons"]
    # a group weighs its heaviest member on the critical path
    assert plan["nova"]["critical"] == {"services": ["mariadb", "keystone", "libvirt & neutron & nova"], "duration": 420}


def test_depends_on_adds_an_order_the_charts_do_not_state() -> None:
    plan = _plan(_site(nova={"depends_on": ["placement"]}))
    assert plan["nova"]["wait_for"][0] == "placement"
    assert "placement" in plan["neutron"]["wait_for"] and "placement" in plan["libvirt"]["wait_for"]
    assert plan["neutron"]["wait_at"]["placement"] == "2025.2"
    # the group follows placement: its flows still start together
    assert plan["neutron"]["level"] == plan["nova"]["level"] == plan["placement"]["level"] + 1


def test_depends_on_against_the_pods_order_is_refused() -> None:
    with pytest.raises(SiteError) as err:
        _plan(_site(nova={"depends_on": ["neutron"]}))
    assert str(err.value).startswith("nova lists neutron in depends_on, but neutron waits for nova through its pods "
                                     "(neutron: DaemonSet neutron-dhcp-agent-default waits for Service openstack/nova-api")
    assert str(err.value).endswith("Remove neutron from nova's depends_on")


def test_removal_takes_the_same_graph_in_reverse() -> None:
    plan = _plan(_site(), action="remove")
    assert plan["keystone"]["levels"][0] == ["barbican", "cinder", "libvirt", "neutron", "nova", "placement"]
    # a removal waits for its dependents, never for the services removed beside it
    assert plan["neutron"]["dependents"] == []
    assert plan["openvswitch"]["dependents"] == ["libvirt", "neutron", "nova"]
    assert plan["keystone"]["dependents"] == ["barbican", "cinder", "libvirt", "neutron", "nova", "placement"]


def test_components_of_a_small_graph() -> None:
    edges = {"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"], "e": []}
    assert components(edges) == [["a", "b", "c"], ["d"], ["e"]]


def test_a_config_object_nothing_will_create_is_refused_before_anything_runs() -> None:
    """The stock values of cinder, nova and libvirt mount the Ceph client's ceph-etc:
    without Ceph their pods would stay ContainerCreating forever."""
    with pytest.raises(SiteError) as err:
        derive(_renders(STOCK), lambda dep: dep.kind == "Service")
    text = str(err.value)
    assert ("nova: DaemonSet nova-compute-default needs ConfigMap openstack/ceph-etc (volume ceph-etc), which no "
            "service of the site renders, the cluster does not have, and nova cannot create: its pods would "
            "never start") in text
    assert "libvirt: DaemonSet libvirt-libvirt-default needs Secret openstack/pvc-ceph-client-key" in text
    # cinder's storage-init creates its rbd keyring at run time (its Role may create Secrets): not refused
    assert "cinder-volume-rbd-keyring" not in text
    assert text.endswith("or switch off what needs it in the waiting service's values")


def test_a_config_object_another_service_renders_is_a_dependency_on_it() -> None:
    mounts = {"volumes": [{"name": "etc", "configMap": {"name": "shared-etc"}},
                          {"name": "maybe", "secret": {"secretName": "absent", "optional": True}}]}
    charts = {"a": [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "a"},
                     "spec": {"template": {"metadata": {"labels": {"app": "a"}}, "spec": mounts}}}],
              "b": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "shared-etc"}}]}
    graph = derive(_renders(charts), lambda dep: False)
    assert graph.edges[_by("a")] == {_by("b"): ["Deployment a needs ConfigMap openstack/shared-etc (volume etc)"]}
