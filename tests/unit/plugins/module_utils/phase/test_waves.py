"""plugins/module_utils/phase/waves.py and the waves select() builds from it:
the order openstack-helm charts declare with kubernetes-entrypoint.

Runs on the real keystone and placement renders (fixtures/openstack_helm/).
"""

from __future__ import annotations

import copy
import itertools
import json
from typing import Any, Dict, List, Optional, Sequence

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.helm import render
from ansible_collections.lcm.openstack.plugins.module_utils.phase import selection, waves
from ansible_collections.lcm.openstack.plugins.module_utils.phase.waves import Dependency
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError, PhaseError
from support.paths import UNIT_FIXTURES

FIXTURES = UNIT_FIXTURES / "openstack_helm"
_PARSED = {name: render.parse_manifest((FIXTURES / f"{name}.out").read_text())
           for name in ("keystone", "placement")}
KEYSTONE_JOBS = ["db-init", "db-sync", "credential-setup", "fernet-setup", "domain-manage", "bootstrap"]


def _chart(name: str) -> List[render.Rendered]:
    """A fresh copy: select() sets .wave on what it is given."""
    return [render.Rendered(copy.deepcopy(r.obj), r.source) for r in _PARSED[name]]


def _wave_of(objects: Sequence[render.Rendered]) -> Dict[str, int]:
    return {r.key: i for i, wave in enumerate(selection.waves(objects)) for r in wave}


def _jobs_by_wave(objects: Sequence[render.Rendered]) -> List[List[str]]:
    return [sorted(r.name for r in w if r.kind == "Job") for w in selection.waves(objects)
            if any(r.kind == "Job" for r in w)]


# -- what the pods declare ---------------------------------------------------------

def test_keystone_db_sync_declares_its_jobs_and_the_database() -> None:
    by_key = {r.key: r for r in _chart("keystone")}
    assert waves.declared(by_key["Job/keystone-db-sync"].obj) == [
        Dependency("Service", "openstack", "mariadb", env="DEPENDENCY_SERVICE"),
        Dependency("Job", name="keystone-db-init", env="DEPENDENCY_JOBS"),
        Dependency("Job", name="keystone-credential-setup", env="DEPENDENCY_JOBS"),
        Dependency("Job", name="keystone-fernet-setup", env="DEPENDENCY_JOBS"),
    ]
    assert waves.declared(by_key["Job/keystone-fernet-setup"].obj) == []


def _entrypoint_job(name: str, labels: Optional[Dict[str, str]] = None, **env: str) -> Dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"template": {"metadata": {"labels": labels or {}}, "spec": {
                "initContainers": [{"name": "init", "env": [{"name": k, "value": v} for k, v in env.items()]
                                    + [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}]}],
                "containers": [{"name": name}]}}}}


def test_every_kind_of_declaration_is_read() -> None:
    job = _entrypoint_job(
        "x",
        DEPENDENCY_JOBS_JSON=json.dumps([{"name": "a"}, {"labels": {"app": "b"}, "namespace": "other"}]),
        DEPENDENCY_SERVICE="openstack:mariadb, memcached",
        DEPENDENCY_DAEMONSET="ovs-agent",
        DEPENDENCY_POD_JSON=json.dumps([{"labels": {"application": "ovs"}, "requireSameNode": True}]),
        DEPENDENCY_CUSTOM_RESOURCE=json.dumps([{"apiVersion": "v1", "kind": "Workflow", "namespace": "n",
                                                "name": "wf", "fields": []}]),
        DEPENDENCY_CONTAINER="ignored")
    assert waves.declared(job) == [
        Dependency("Job", "", "a", env="DEPENDENCY_JOBS_JSON"),
        Dependency("Job", "other", "", (("app", "b"),), env="DEPENDENCY_JOBS_JSON"),
        Dependency("Service", "openstack", "mariadb", env="DEPENDENCY_SERVICE"),
        Dependency("Service", "", "memcached", env="DEPENDENCY_SERVICE"),
        Dependency("DaemonSet", name="ovs-agent", env="DEPENDENCY_DAEMONSET"),
        Dependency("Pod", labels=(("application", "ovs"),), env="DEPENDENCY_POD_JSON"),
        Dependency("CustomResource", "n", "Workflow/wf", env="DEPENDENCY_CUSTOM_RESOURCE"),
    ]
    assert Dependency("Job", "other", "", (("app", "b"),)).describe() == "Job other/labelled app=b"


@pytest.mark.parametrize("value", ["{not json", json.dumps({"name": "a"}), json.dumps(["a"])])
def test_a_malformed_json_declaration_is_an_error(value: str) -> None:
    with pytest.raises(KubeError, match="DEPENDENCY_JOBS_JSON"):
        waves.declared(_entrypoint_job("x", DEPENDENCY_JOBS_JSON=value))


# -- waves from the declarations -----------------------------------------------------

KEYSTONE_ORDER = [["keystone-credential-setup", "keystone-db-init", "keystone-fernet-setup"],
                  ["keystone-db-sync"], ["keystone-domain-manage"], ["keystone-bootstrap"]]


@pytest.mark.parametrize("order", [pytest.param(list(p), id="-".join(p)) for p in itertools.permutations(
    ["db-sync", "credential-setup", "domain-manage", "bootstrap"])] + [
    pytest.param(list(reversed(KEYSTONE_JOBS)), id="all-reversed")])
def test_keystone_jobs_run_in_declared_order_whatever_the_template_list(order: List[str]) -> None:
    """db-sync waits for credential-setup (DEPENDENCY_JOBS); domain-manage for the
    keystone-api Service, whose Deployment waits for db-sync; bootstrap for domain-manage.
    A list that names db-sync first must not apply it first."""
    templates = [f"job-{t}" for t in order] + [f"job-{t}" for t in KEYSTONE_JOBS if t not in order]
    chosen = selection.select(_chart("keystone"), "install", "templates", templates, "openstack")
    assert _jobs_by_wave(chosen) == KEYSTONE_ORDER


def test_declared_levels_replace_list_order_and_hook_weights() -> None:
    """The Jobs of one level run together, in whatever order the list names them;
    config objects stay first, in one wave."""
    chosen = selection.select(_chart("keystone"), "install", "templates",
                              ["job-fernet-setup", "job-db-sync", "job-db-init", "job-credential-setup"])
    assert _jobs_by_wave(chosen) == KEYSTONE_ORDER[:2]
    grouped = selection.waves(chosen)
    assert all(r.kind in selection.CONFIG_KINDS for r in grouped[0])
    assert len(grouped) == 3


def test_a_wave_annotation_orders_within_a_level_only() -> None:
    rendered = _chart("keystone")
    for r in rendered:
        if r.key in ("Job/keystone-credential-setup", "Job/keystone-db-sync"):
            r.obj["metadata"].setdefault("annotations", {})[selection.ANNOTATION_WAVE] = "-9"
    chosen = selection.select(rendered, "install", "templates",
                              ["job-fernet-setup", "job-db-sync", "job-db-init", "job-credential-setup"])
    assert _jobs_by_wave(chosen) == [["keystone-credential-setup"], ["keystone-db-init", "keystone-fernet-setup"],
                                     ["keystone-db-sync"]]


def test_placement_ks_endpoints_after_user_and_service_db_sync_after_db_init() -> None:
    chosen = selection.select(_chart("placement"), "install", "templates",
                              ["job-ks-endpoints", "job-db-sync", "job-ks-user", "job-ks-service", "job-db-init"])
    wave = _wave_of(chosen)
    assert wave["Job/placement-db-init"] < wave["Job/placement-db-sync"]
    assert wave["Job/placement-ks-user"] < wave["Job/placement-ks-endpoints"]
    assert wave["Job/placement-ks-service"] < wave["Job/placement-ks-endpoints"]


def test_a_chart_that_declares_nothing_keeps_list_and_weight_order() -> None:
    rendered = [render.Rendered(_entrypoint_job("b"), "templates/job-b.yaml"),
                render.Rendered(_entrypoint_job("a"), "templates/job-a.yaml")]
    chosen = selection.select(rendered, "install", "templates", ["job-b", "job-a"])
    assert [(r.name, r.wave) for r in chosen] == [("b", (0, 0)), ("a", (1, 0))]


def test_a_cycle_is_an_error_naming_both_ends() -> None:
    rendered = [render.Rendered(_entrypoint_job("a", DEPENDENCY_JOBS="b"), "templates/job-a.yaml"),
                render.Rendered(_entrypoint_job("b", DEPENDENCY_JOBS="a"), "templates/job-b.yaml")]
    with pytest.raises(PhaseError) as err:
        selection.select(rendered, "install", "templates", ["job-a", "job-b"])
    assert "cycle: Job a waits for Job b waits for Job a" in str(err.value)


def test_a_cycle_through_a_workload_outside_the_phase_is_found() -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api"},
                  "spec": {"template": {"metadata": {"labels": {"app": "api"}}, "spec": {
                      "initContainers": [{"name": "init", "env": [{"name": "DEPENDENCY_JOBS", "value": "sync"}]}],
                      "containers": [{"name": "api"}]}}}}
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "api"},
               "spec": {"selector": {"app": "api"}}}
    rendered = [render.Rendered(deployment, "templates/deployment.yaml"),
                render.Rendered(service, "templates/service.yaml"),
                render.Rendered(_entrypoint_job("sync", DEPENDENCY_SERVICE="openstack:api"), "templates/job-sync.yaml")]
    with pytest.raises(PhaseError, match="cycle: Job sync waits for Job sync"):
        selection.select(rendered, "install", "templates", ["job-sync"], "openstack")


def test_jobs_json_by_labels_and_pod_json_order_the_jobs() -> None:
    rendered = [
        render.Rendered(_entrypoint_job("late", DEPENDENCY_JOBS_JSON=json.dumps([{"labels": {"step": "one"}}])),
                        "templates/job-late.yaml"),
        render.Rendered(_entrypoint_job("later", DEPENDENCY_POD_JSON=json.dumps([{"labels": {"step": "two"}}])),
                        "templates/job-later.yaml"),
        render.Rendered(_entrypoint_job("two", {"step": "two"}, DEPENDENCY_JOBS="late"), "templates/job-two.yaml"),
        render.Rendered(_entrypoint_job("one", {"step": "one"}), "templates/job-one.yaml"),
    ]
    chosen = selection.select(rendered, "install", "templates", ["job-*"])
    assert _jobs_by_wave(chosen) == [["one"], ["late"], ["two"], ["later"]]


def test_a_service_in_another_namespace_is_not_the_charts() -> None:
    graph = waves.Graph(_chart("keystone"), "openstack")
    assert graph.resolve(Dependency("Service", "openstack", "keystone-api")) == [("Deployment", "keystone-api")]
    assert graph.resolve(Dependency("Service", "elsewhere", "keystone-api")) == []
    assert graph.resolve(Dependency("Service", "openstack", "mariadb")) == []


# -- dependencies outside the phase ---------------------------------------------------

def _install(chart: str, templates: List[str]) -> List[render.Rendered]:
    return selection.select(_chart(chart), "install", "templates", templates, "openstack")


def test_a_job_the_phase_does_not_run_and_the_cluster_lacks_is_an_error() -> None:
    chosen = _install("keystone", ["job-db-sync", "job-credential-setup", "job-fernet-setup"])
    asked: List[Dependency] = []

    def exists(dep: Dependency) -> bool:
        asked.append(dep)
        return dep.kind == "Service"

    with pytest.raises(PhaseError) as err:
        waves.check(chosen, _chart("keystone"), "openstack", exists)
    msg = str(err.value)
    assert ("Job keystone-db-sync waits for Job openstack/keystone-db-init (DEPENDENCY_JOBS), which this phase "
            "does not create and the cluster does not have (the chart renders it from "
            "templates/job-db-init.yaml: add it to source.templates)") in msg
    assert "credential-setup" not in msg.split("waits for", 1)[1]  # in the phase: not asked about
    assert Dependency("Job", "openstack", "keystone-credential-setup", env="DEPENDENCY_JOBS") not in asked


def test_a_job_in_the_cluster_is_an_external_dependency() -> None:
    chosen = _install("keystone", ["job-db-sync"])
    waves.check(chosen, _chart("keystone"), "openstack", lambda dep: True)


def test_a_service_neither_in_the_phase_nor_in_the_cluster_is_an_error() -> None:
    chosen = _install("placement", ["job-ks-*"])
    with pytest.raises(PhaseError) as err:
        waves.check(chosen, _chart("placement"), "openstack", lambda dep: dep.kind == "Job")
    msg = str(err.value)
    for job in ("placement-ks-user", "placement-ks-service", "placement-ks-endpoints"):
        assert f"Job {job} waits for Service openstack/keystone-api (DEPENDENCY_SERVICE)" in msg


def test_the_whole_keystone_install_needs_only_the_database_and_its_own_service() -> None:
    chosen = _install("keystone", [f"job-{t}" for t in KEYSTONE_JOBS])
    asked: List[Dependency] = []
    waves.check(chosen, _chart("keystone"), "openstack", lambda dep: asked.append(dep) or True)
    assert sorted({d.describe() for d in asked}) == ["Service openstack/keystone-api", "Service openstack/mariadb"]


def _absent_from_the_cluster(asked: List[Dependency]) -> Any:
    def exists(dep: Dependency) -> bool:
        asked.append(dep)
        return dep.name in ("mariadb", "memcached")  # the infrastructure is there, keystone is not
    return exists


def test_before_the_release_exists_its_own_services_are_to_come() -> None:
    """The check mode of a greenfield: keystone-api is the release's, not the
    cluster's yet; domain-manage and bootstrap wait for it."""
    chosen = _install("keystone", [f"job-{t}" for t in KEYSTONE_JOBS])
    asked: List[Dependency] = []
    waves.check(chosen, _chart("keystone"), "openstack", _absent_from_the_cluster(asked),
                release_creates=True)
    assert {d.describe() for d in asked} == {"Service openstack/mariadb"}
    with pytest.raises(PhaseError, match="waits for Service openstack/keystone-api"):
        waves.check(chosen, _chart("keystone"), "openstack", _absent_from_the_cluster([]))


def test_a_job_is_not_to_come_with_the_release() -> None:
    chosen = _install("keystone", ["job-db-sync"])
    with pytest.raises(PhaseError) as err:
        waves.check(chosen, _chart("keystone"), "openstack", _absent_from_the_cluster([]),
                    release_creates=True)
    assert "waits for Job openstack/keystone-db-init" in str(err.value)


def test_a_service_the_chart_does_not_render_is_not_to_come() -> None:
    chosen = _install("placement", ["job-ks-*"])
    with pytest.raises(PhaseError, match="waits for Service openstack/keystone-api"):
        waves.check(chosen, _chart("placement"), "openstack", lambda dep: dep.kind == "Job",
                    release_creates=True)


def test_a_service_a_flow_beside_it_creates_is_waited_for_and_said() -> None:
    """A site deploys placement beside keystone's flow (as nova beside neutron):
    keystone-api is not in the cluster yet, and the record says who makes it."""
    chosen = _install("placement", ["job-ks-*"])
    reads: List[int] = []

    def provided() -> Dict[Any, str]:
        reads.append(1)
        return {("Service", "openstack", "keystone-api"): "keystone"}
    beside = waves.check(chosen, _chart("placement"), "openstack", lambda dep: dep.kind == "Job",
                         provided=provided)
    assert beside == ["Service openstack/keystone-api: keystone's flow, running beside this one, creates it"]
    assert reads  # read only once something is not in the phase
    # Another service's object is still refused.
    with pytest.raises(PhaseError, match="waits for Service openstack/keystone-api"):
        waves.check(chosen, _chart("placement"), "openstack", lambda dep: dep.kind == "Job",
                    provided=lambda: {("Service", "openstack", "nova-api"): "nova"})
