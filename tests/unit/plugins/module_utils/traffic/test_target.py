"""plugins/module_utils/traffic/target.py: the object a service's traffic moves, chosen from what its
release renders: over excerpts of every stock openstack-helm chart's render (tests/unit/fixtures/
traffic_target, written by its regenerate script) and of this collection's own charts."""

from __future__ import annotations

import copy
from typing import Any, Dict, List

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.kube import release_services
from ansible_collections.lcm.openstack.plugins.module_utils.traffic import target
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.backends import GATE_LABEL
from support.paths import UNIT_FIXTURES

FIXTURES = UNIT_FIXTURES / "traffic_target"


def _render(chart: str, jobs: bool = False) -> Dict[str, Any]:
    """A chart's excerpt; without its Jobs unless asked, as the flows install a release (jobs off)."""
    data = yaml.safe_load((FIXTURES / f"{chart}.yaml").read_text())
    if not jobs:
        data["objects"] = [o for o in data["objects"] if o["kind"] != "Job"]
    return data


def _choose(chart: str, backend: str = "service_selector", service: str = "", release: str = "",
            jobs: bool = False, data: Any = None) -> target.Target:
    data = data or _render(chart, jobs)
    return target.choose(backend, service or chart, release or chart, data["objects"], data["values"])


# Every stock chart, as the flows install it and as `helm template` renders it with its Jobs.
STOCK = {
    "mariadb": "mariadb", "memcached": "memcached", "rabbitmq": "rabbitmq", "keystone": "keystone-api",
    "placement": "placement-api", "nova": "nova-api", "neutron": "neutron-server", "cinder": "cinder-api",
    "barbican": "barbican-api", "openvswitch": "", "libvirt": "",
}


@pytest.mark.parametrize("jobs", [False, True], ids=["release", "with-jobs"])
@pytest.mark.parametrize("chart, expected", sorted(STOCK.items()))
def test_every_stock_chart_gives_its_own_service_or_nothing(chart: str, expected: str, jobs: bool) -> None:
    chosen = _choose(chart, jobs=jobs)
    assert (chosen.kind, chosen.name) == ("Service", expected)


def test_a_node_agent_has_nothing_to_route_and_says_why() -> None:
    chosen = _choose("openvswitch")
    assert chosen.nothing
    assert chosen.why == "release openvswitch renders no Service: nothing to route"


def test_neutron_is_its_server_not_a_name_guessed_from_the_service() -> None:
    chosen = _choose("neutron")
    assert chosen.name == "neutron-server" and chosen.name != "neutron-api"
    assert "the only Service of release neutron" in chosen.why


def test_nova_of_three_services_is_its_compute_api() -> None:
    data = _render("nova")
    services = sorted(o["metadata"]["name"] for o in data["objects"] if o["kind"] == "Service")
    assert services == ["nova-api", "nova-metadata", "nova-novncproxy"]
    assert "api port" in _choose("nova").why  # the release: no Jobs, the api port decides
    assert "ks-service and ks-endpoints Jobs" in _choose("nova", jobs=True).why


def test_mariadb_is_the_internal_host_of_its_database_endpoint() -> None:
    chosen = _choose("mariadb")
    assert chosen.name == "mariadb"
    assert "oslo_db" in chosen.why  # not mariadb-server (direct) nor mariadb-discovery


def test_the_release_name_does_not_change_the_choice() -> None:
    data = _render("keystone")
    for obj in data["objects"]:
        for labels in (obj["spec"].get("selector") or {}, ((obj["spec"].get("template") or {}).get("metadata")
                                                           or {}).get("labels") or {}):
            if "release_group" in labels:
                labels["release_group"] = "keystone-b"
    assert _choose("keystone", release="keystone-b", data=data).name == "keystone-api"


def test_this_collections_charts_keep_their_one_service() -> None:
    assert _choose("example_keystone", service="keystone", release="keystone").name == "keystone-api"
    assert _choose("svc", service="svc-a", release="svc-a").name == "svc-a-api"


def test_two_candidates_with_no_way_to_choose_is_an_error_naming_the_input() -> None:
    data = _render("nova")
    data["values"] = {}  # no endpoints to tell them apart
    with pytest.raises(PhaseError) as err:
        _choose("nova", data=data)
    message = str(err.value)
    assert "release nova renders 3 Services that could take nova's traffic" in message
    assert "nova-api, nova-metadata, nova-novncproxy" in message
    assert "flow input traffic_target (the traffic module's selector_service)" in message


def test_two_candidates_in_the_deciding_tier_are_an_error_listing_only_them() -> None:
    data = _render("nova")
    data["values"]["endpoints"]["compute_metadata"]["port"]["api"] = {}  # a second api endpoint
    with pytest.raises(PhaseError) as err:
        _choose("nova", data=data)
    assert "renders 2 Services" in str(err.value) and "nova-api, nova-metadata;" in str(err.value)


def test_services_that_select_no_pods_are_not_candidates() -> None:
    data = _render("openvswitch")
    data["objects"] += [
        {"kind": "Service", "metadata": {"name": "external"}, "spec": {"type": "ExternalName", "selector": {"a": "b"}}},
        {"kind": "Service", "metadata": {"name": "manual"}, "spec": {"ports": [{"port": 80}]}},
    ]
    chosen = _choose("openvswitch", data=data)
    assert chosen.nothing and chosen.why == "release openvswitch renders no Service that selects pods: nothing to route"


def test_services_whose_pods_no_workload_makes_are_all_candidates() -> None:
    objects = [{"kind": "Service", "metadata": {"name": "web"}, "spec": {"selector": {"app": "web"}}}]
    assert target.choose("service_selector", "web", "web", objects, {}).name == "web"


def test_a_gated_selector_still_selects_its_pods() -> None:
    """The gate's key (the collection's own) is read past; a chart's keys are not."""
    service = {"kind": "Service", "metadata": {"name": "keystone-api"},
               "spec": {"selector": {"application": "keystone", GATE_LABEL: "drained"}}}
    other = {"kind": "Service", "metadata": {"name": "other"}, "spec": {"selector": {"application": "other"}}}
    pods = [{"application": "keystone"}]
    assert [s["metadata"]["name"] for s in release_services.candidates([other, service], pods)] == ["keystone-api"]
    assert not release_services.selects({"application": "keystone", "track": "blue"}, pods[0])


def _with_ingress(*ingresses: Dict[str, Any]) -> Dict[str, Any]:
    data = _render("example_keystone")
    data["objects"] = [o for o in data["objects"] if o["kind"] != "Ingress"] + list(ingresses)
    return data


def _ingress(name: str, service: str) -> Dict[str, Any]:
    return {"kind": "Ingress", "metadata": {"name": name},
            "spec": {"rules": [{"http": {"paths": [{"backend": {"service": {"name": service}}}]}}]}}


def test_the_ingress_is_the_one_in_front_of_the_service() -> None:
    chosen = _choose("example_keystone", "ingress_canary", service="keystone")
    assert (chosen.kind, chosen.name) == ("Ingress", "keystone")
    data = _with_ingress(_ingress("keystone-public", "keystone-api"), _ingress("admin", "elsewhere"))
    assert _choose("example_keystone", "ingress_canary", service="keystone", data=data).name == "keystone-public"


def test_of_several_ingresses_the_one_named_after_the_public_host_wins() -> None:
    data = _with_ingress(_ingress("keystone", "keystone-api"), _ingress("keystone-fqdn", "keystone-api"))
    data["values"] = {"endpoints": {"identity": {"hosts": {"default": "keystone", "internal": "keystone-api"}}}}
    chosen = _choose("example_keystone", "ingress_canary", service="keystone", data=data)
    assert chosen.name == "keystone" and "public host" in chosen.why
    data["values"] = {}
    with pytest.raises(PhaseError, match=r"renders 2 Ingresses \(in front of Service keystone-api\): "
                                         r"keystone, keystone-fqdn; .* module's ingress\)"):
        _choose("example_keystone", "ingress_canary", service="keystone", data=data)


def test_no_ingress_in_front_of_the_service_is_an_error_naming_the_input() -> None:
    with pytest.raises(PhaseError) as err:
        _choose("keystone", "ingress_canary")
    assert "renders no Ingress in front of Service keystone-api" in str(err.value)
    assert "flow input traffic_target (the traffic module's ingress)" in str(err.value)


def test_the_route_is_the_one_whose_backend_is_the_service() -> None:
    data = _render("placement")
    data["objects"].append({"kind": "Route", "metadata": {"name": "placement"},
                            "spec": {"to": {"kind": "Service", "name": "placement-api"}}})
    chosen = _choose("placement", "openshift_route", data=data)
    assert (chosen.kind, chosen.name) == ("Route", "placement")


def test_a_node_agent_has_nothing_to_route_with_any_backend() -> None:
    for backend in target.KIND:
        assert _choose("libvirt", backend).nothing


@pytest.mark.parametrize("endpoint, which, host", [
    ({"hosts": {"default": "keystone", "internal": "keystone-api"}}, "internal", "keystone-api"),
    ({"hosts": {"default": "placement-api", "public": "placement"}}, "internal", "placement-api"),
    ({"hosts": {"default": "placement-api", "public": "placement"}}, "public", "placement"),
    ({"hosts": {"default": {"host": "mariadb"}}}, "internal", "mariadb"),
    ({"hosts": {"default": "10.0.0.5"}}, "internal", None),
    ({"host": "keystone-api"}, "internal", None),
])
def test_internal_host(endpoint: Dict[str, Any], which: str, host: Any) -> None:
    assert target.internal_host(endpoint, which) == host


def test_registered_types_read_the_keystone_jobs_as_helm_toolkit_looks_them_up() -> None:
    jobs: List[Dict[str, Any]] = [
        {"kind": "Job", "metadata": {"name": "barbican-ks-endpoints"},
         "spec": {"template": {"spec": {"containers": [{"env": [{"name": "OS_SERVICE_TYPE",
                                                                 "value": "key-manager"}]}]}}}},
        {"kind": "Job", "metadata": {"name": "barbican-db-sync"},
         "spec": {"template": {"spec": {"containers": [{"env": [{"name": "OS_SERVICE_TYPE", "value": "x"}]}]}}}},
    ]
    assert target.registered_types(jobs) == ["key_manager"]
    assert target.registered_types(_render("nova", jobs=True)["objects"]) == ["compute"]


def test_the_choice_does_not_change_the_objects_it_reads() -> None:
    data = _render("nova", jobs=True)
    before = copy.deepcopy(data)
    _choose("nova", data=data)
    assert data == before
