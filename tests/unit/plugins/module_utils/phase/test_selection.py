"""plugins/module_utils/phase/selection.py: which rendered objects a phase owns, and in which waves.

The select() cases live in fixtures/phase/selection_cases.yaml and run against
fixtures/phase/rendered_keystone.out (see the comment at the top of the cases).
"""

from __future__ import annotations

import copy
from typing import Any, Dict, List

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.helm import render
from ansible_collections.lcm.openstack.plugins.module_utils.phase import selection
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LcmError, PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import DEFAULT_TEMPLATES, PHASE_TYPES
from support.paths import UNIT_FIXTURES

FIXTURES = UNIT_FIXTURES / "phase"
RENDERED = (FIXTURES / "rendered_keystone.out").read_text()
CASES = yaml.safe_load((FIXTURES / "selection_cases.yaml").read_text())
CASE_KEYS = {"name", "phase_type", "mode", "templates", "expect"}
EXPECT_KEYS = {"objects", "waves", "error_contains"}


def _rendered() -> List[render.Rendered]:
    # select() sets .wave on the objects it is given: parse afresh for each case.
    return render.parse_manifest(RENDERED)


def _keys(objects: List[render.Rendered]) -> List[str]:
    return [r.key for r in objects]


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in CASES])
def test_select(case: Dict[str, Any]) -> None:
    assert set(case) <= CASE_KEYS, f"unknown case keys: {set(case) - CASE_KEYS}"
    expect = case["expect"]
    assert set(expect) <= EXPECT_KEYS, f"unknown expect keys: {set(expect) - EXPECT_KEYS}"
    rendered = _rendered()
    args = (rendered, case["phase_type"], case["mode"], case.get("templates"))

    if "error_contains" in expect:
        assert "objects" not in expect
        with pytest.raises(LcmError) as err:
            selection.select(*args)
        wanted = expect["error_contains"]
        for text in [wanted] if isinstance(wanted, str) else wanted:
            assert text in str(err.value)
        return

    objects = selection.select(*args)
    got = _keys(objects)
    assert len(got) == len(set(got)), f"an object was selected twice: {got}"
    assert set(got) == set(expect["objects"]), (
        f"missing: {sorted(set(expect['objects']) - set(got))}, "
        f"unexpected: {sorted(set(got) - set(expect['objects']))}")
    assert len(expect["objects"]) == len(set(expect["objects"])), "duplicate in the fixture"

    # sorted by wave, and the waves follow the expected order
    assert [r.wave for r in objects] == sorted(r.wave for r in objects)
    grouped = selection.waves(objects)
    index = {r.key: i for i, wave in enumerate(grouped) for r in wave}
    positions = [index[k] for k in expect["objects"]]
    assert positions == sorted(positions), (
        f"out of wave order: {[[r.key for r in w] for w in grouped]}")

    # config kinds (and only they) come first, in one wave
    config = [r.key for r in objects if r.kind in selection.CONFIG_KINDS]
    if config:
        assert set(_keys(grouped[0])) == set(config)
        assert all(r.wave == selection.CONFIG_WAVE for r in grouped[0])

    if "waves" in expect:
        assert [set(_keys(w)) for w in grouped] == [set(w) for w in expect["waves"]], (
            f"got waves {[_keys(w) for w in grouped]}")
        assert sum(len(w) for w in expect["waves"]) == len(expect["objects"])


def test_cases_are_named_uniquely_and_cover_every_phase_type_and_mode() -> None:
    names = [c["name"] for c in CASES]
    assert len(names) == len(set(names))
    assert {c["phase_type"] for c in CASES} == set(PHASE_TYPES)
    assert {c["mode"] for c in CASES} >= set(selection.MODES)


def test_fixture_renders_every_default_template() -> None:
    """Every default glob of model.DEFAULT_TEMPLATES matches something in the
    fixture or in the openstack-helm keystone render."""
    import fnmatch
    keystone = (UNIT_FIXTURES / "openstack_helm" / "keystone.out").read_text()
    sources = {r.source for r in _rendered() + render.parse_manifest(keystone)}
    for phase_type, globs in DEFAULT_TEMPLATES.items():
        for glob in globs:
            assert any(fnmatch.fnmatchcase(s, glob) for s in sources), (phase_type, glob)


def test_select_does_not_modify_the_objects() -> None:
    rendered = _rendered()
    before = copy.deepcopy([r.obj for r in rendered])
    selection.select(rendered, "install", "templates")
    assert [r.obj for r in rendered] == before


def test_selected_objects_are_the_rendered_ones() -> None:
    """select() returns the very Rendered objects (with their sources), not copies."""
    rendered = _rendered()
    ids = {id(r) for r in rendered}
    chosen = selection.select(rendered, "upgrade", "templates")
    assert chosen and all(id(r) in ids for r in chosen)
    job = next(r for r in chosen if r.key == "Job/keystone-db-sync")
    assert job.source == "templates/job-db-sync.yaml"


def test_select_is_repeatable_on_the_same_objects() -> None:
    """Selecting another phase from the same rendered list, then this one again, gives the same waves."""
    rendered = _rendered()
    first = [(r.key, r.wave) for r in selection.select(rendered, "install", "templates")]
    selection.select(rendered, "upgrade", "stage")
    again = [(r.key, r.wave) for r in selection.select(rendered, "install", "templates")]
    assert again == first


# -- wave annotation -------------------------------------------------------------

def _obj(kind: str, name: str, api_version: str = "v1", annotations: Dict[str, str] = None,
         **rest: Any) -> Dict[str, Any]:
    meta: Dict[str, Any] = {"name": name}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **rest}


def _job(name: str, annotations: Dict[str, str] = None, **pod: Any) -> Dict[str, Any]:
    return _obj("Job", name, "batch/v1", annotations,
                spec={"template": {"spec": {"containers": [{"name": "c", "image": "i"}], **pod}}})


def test_invalid_wave_annotation_names_the_object() -> None:
    rendered = [render.Rendered(_job("bad", {selection.ANNOTATION_WAVE: "first"}),
                                "templates/job-bad.yaml")]
    with pytest.raises(PhaseError) as err:
        selection.select(rendered, "install", "templates", ["job-bad"])
    assert "Job/bad" in str(err.value)
    assert selection.ANNOTATION_WAVE in str(err.value)
    assert "'first'" in str(err.value)


def test_wave_annotation_on_a_config_object_is_kept() -> None:
    rendered = [render.Rendered(_obj("ConfigMap", "late", annotations={selection.ANNOTATION_WAVE: "3"}),
                                "templates/cm.yaml"),
                render.Rendered(_job("work"), "templates/job-work.yaml")]
    chosen = selection.select(rendered, "install", "templates", ["cm", "job-work"])
    assert [(r.key, r.wave) for r in chosen] == [("Job/work", (1, 0)), ("ConfigMap/late", (3,))]


def test_wave_annotation_on_a_referenced_config_object_is_kept() -> None:
    """A ConfigMap pulled in because a selected Job mounts it keeps its own wave annotation."""
    rendered = [
        render.Rendered(_obj("ConfigMap", "early", annotations={selection.ANNOTATION_WAVE: "-5"}),
                        "templates/configmap-early.yaml"),
        render.Rendered(_obj("ConfigMap", "late", annotations={selection.ANNOTATION_WAVE: "9"}),
                        "templates/configmap-late.yaml"),
        render.Rendered(_job("work", volumes=[{"name": "a", "configMap": {"name": "early"}},
                                              {"name": "b", "configMap": {"name": "late"}}]),
                        "templates/job-work.yaml"),
    ]
    chosen = selection.select(rendered, "install", "templates", ["job-work"])
    waves = {r.key: r.wave for r in chosen}
    assert waves == {"ConfigMap/early": (-5,), "Job/work": (0, 0), "ConfigMap/late": (9,)}
    assert _keys(chosen) == ["ConfigMap/early", "Job/work", "ConfigMap/late"]


def test_hook_weight_that_is_not_a_number_counts_as_zero() -> None:
    rendered = [render.Rendered(_job("a", {"helm.sh/hook-weight": "heavy"}), "templates/job-x.yaml"),
                render.Rendered(_job("b", {"helm.sh/hook-weight": "-1"}), "templates/job-x.yaml")]
    chosen = selection.select(rendered, "install", "templates", ["job-x"])
    assert [(r.key, r.wave) for r in chosen] == [("Job/b", (0, -1)), ("Job/a", (0, 0))]


def test_rolebinding_of_a_referenced_account_brings_its_role_but_not_a_clusterrole() -> None:
    rendered = [
        render.Rendered(_job("work", serviceAccountName="runner"), "templates/job-work.yaml"),
        render.Rendered(_obj("ServiceAccount", "runner"), "templates/rbac.yaml"),
        render.Rendered(_obj("RoleBinding", "runner-rb", "rbac.authorization.k8s.io/v1",
                             roleRef={"kind": "Role", "name": "runner-role"},
                             subjects=[{"kind": "ServiceAccount", "name": "runner"}]), "templates/rbac.yaml"),
        render.Rendered(_obj("Role", "runner-role", "rbac.authorization.k8s.io/v1"), "templates/rbac.yaml"),
        render.Rendered(_obj("RoleBinding", "other-rb", "rbac.authorization.k8s.io/v1",
                             roleRef={"kind": "Role", "name": "other-role"},
                             subjects=[{"kind": "ServiceAccount", "name": "other"},
                                       {"kind": "User", "name": "runner"}]), "templates/rbac.yaml"),
        render.Rendered(_obj("Role", "other-role", "rbac.authorization.k8s.io/v1"), "templates/rbac.yaml"),
        render.Rendered(_obj("RoleBinding", "cluster-rb", "rbac.authorization.k8s.io/v1",
                             roleRef={"kind": "ClusterRole", "name": "runner-role"},
                             subjects=[{"kind": "ServiceAccount", "name": "runner"}]), "templates/rbac.yaml"),
    ]
    chosen = selection.select(rendered, "install", "templates", ["job-work"])
    assert set(_keys(chosen)) == {"Job/work", "ServiceAccount/runner", "RoleBinding/runner-rb",
                                  "Role/runner-role", "RoleBinding/cluster-rb"}
    assert _keys(chosen)[-1] == "Job/work"


# -- waves -----------------------------------------------------------------------

def _waved(*pairs: Any) -> List[render.Rendered]:
    return [render.Rendered(_obj("ConfigMap", name), wave=wave) for name, wave in pairs]


def test_waves_groups_consecutive_equal_waves() -> None:
    objs = _waved(("a", (-1,)), ("b", (-1,)), ("c", (0, 1)), ("d", (0, 2)), ("e", (0, 2)), ("f", (3,)))
    assert [[r.name for r in w] for w in selection.waves(objs)] == [["a", "b"], ["c"], ["d", "e"], ["f"]]


def test_waves_keeps_order_and_does_not_merge_separated_runs() -> None:
    objs = _waved(("a", (1,)), ("b", (2,)), ("c", (1,)))
    assert [[r.name for r in w] for w in selection.waves(objs)] == [["a"], ["b"], ["c"]]


def test_waves_of_nothing_is_empty() -> None:
    assert selection.waves([]) == []


def test_waves_of_the_install_selection_puts_config_first() -> None:
    grouped = selection.waves(selection.select(_rendered(), "install", "templates"))
    assert all(r.kind in selection.CONFIG_KINDS for r in grouped[0])
    assert all(r.kind == "Job" for w in grouped[1:] for r in w)


# -- pod_references --------------------------------------------------------------

def test_pod_references_of_the_keystone_jobs() -> None:
    by_key = {r.key: r.obj for r in _rendered()}
    assert selection.pod_references(by_key["Job/keystone-db-sync"]) == {
        ("ServiceAccount", "keystone-db-sync"), ("ConfigMap", "keystone-bin"),
        ("ConfigMap", "keystone-etc"), ("Secret", "keystone-db-user")}
    assert selection.pod_references(by_key["Job/keystone-rabbit-init"]) == {
        ("ServiceAccount", "keystone-rabbit-init"), ("ConfigMap", "keystone-bin"),
        ("Secret", "keystone-rabbitmq-admin"), ("Secret", "keystone-rabbitmq-user")}
    assert selection.pod_references(by_key["Job/keystone-db-restore"]) == {
        ("ServiceAccount", "keystone-db-restore"), ("ConfigMap", "keystone-bin"),
        ("Secret", "keystone-db-admin"), ("Secret", "keystone-registry")}
    assert selection.pod_references(by_key["Deployment/keystone-api"]) == {
        ("ServiceAccount", "keystone-api"), ("ConfigMap", "keystone-bin"),
        ("ConfigMap", "keystone-etc"), ("Secret", "keystone-fernet-keys")}
    assert selection.pod_references(by_key["Pod/keystone-test"]) == {
        ("ServiceAccount", "keystone-test"), ("ConfigMap", "keystone-bin"), ("ConfigMap", "keystone-etc"),
        ("Secret", "keystone-keystone-admin"), ("Secret", "keystone-keystone-test")}


FULL_POD_SPEC: Dict[str, Any] = {
    "serviceAccountName": "sa",
    "imagePullSecrets": [{"name": "pull"}],
    "volumes": [
        {"name": "v1", "secret": {"secretName": "vol-secret"}},
        {"name": "v2", "configMap": {"name": "vol-cm"}},
        {"name": "v3", "projected": {"sources": [
            {"secret": {"name": "proj-secret"}}, {"configMap": {"name": "proj-cm"}},
            {"serviceAccountToken": {"path": "token"}}, {"downwardAPI": {"items": []}}]}},
        {"name": "v4", "emptyDir": {}},
        {"name": "v5", "persistentVolumeClaim": {"claimName": "data"}},
    ],
    "initContainers": [{
        "name": "init",
        "envFrom": [{"configMapRef": {"name": "init-cm"}}],
        "env": [{"name": "A", "valueFrom": {"secretKeyRef": {"name": "init-secret", "key": "k"}}}],
    }],
    "containers": [{"name": "main",
                    "envFrom": [{"secretRef": {"name": "env-secret"}}, {"prefix": "X_"}],
                    "env": [{"name": "B", "valueFrom": {"configMapKeyRef": {"name": "env-cm", "key": "k"}}},
                            {"name": "C", "value": "plain"},
                            {"name": "D", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]}],
}
FULL_REFS = {("ServiceAccount", "sa"), ("Secret", "pull"), ("Secret", "vol-secret"), ("ConfigMap", "vol-cm"),
             ("Secret", "proj-secret"), ("ConfigMap", "proj-cm"), ("ConfigMap", "init-cm"),
             ("Secret", "init-secret"), ("Secret", "env-secret"), ("ConfigMap", "env-cm")}


@pytest.mark.parametrize("obj", [
    pytest.param({"kind": "Pod", "spec": FULL_POD_SPEC}, id="Pod"),
    pytest.param({"kind": "Job", "spec": {"template": {"spec": FULL_POD_SPEC}}}, id="Job"),
    pytest.param({"kind": "Deployment", "spec": {"template": {"spec": FULL_POD_SPEC}}}, id="Deployment"),
    pytest.param({"kind": "StatefulSet", "spec": {"template": {"spec": FULL_POD_SPEC}}}, id="StatefulSet"),
    pytest.param({"kind": "DaemonSet", "spec": {"template": {"spec": FULL_POD_SPEC}}}, id="DaemonSet"),
    pytest.param({"kind": "ReplicaSet", "spec": {"template": {"spec": FULL_POD_SPEC}}}, id="ReplicaSet"),
    pytest.param({"kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": {"spec": FULL_POD_SPEC}}}}},
                 id="CronJob"),
])
def test_pod_references_every_way_of_referencing(obj: Dict[str, Any]) -> None:
    assert selection.pod_references(obj) == FULL_REFS


def test_pod_references_default_service_account() -> None:
    assert selection.pod_references({"kind": "Pod", "spec": {"containers": [{"name": "c"}]}}) == {
        ("ServiceAccount", "default")}


def test_pod_references_deprecated_service_account_field() -> None:
    obj = {"kind": "Job", "spec": {"template": {"spec": {"serviceAccount": "old", "containers": []}}}}
    assert selection.pod_references(obj) == {("ServiceAccount", "old")}


def test_pod_references_of_an_empty_workload() -> None:
    assert selection.pod_references({"kind": "Deployment"}) == {("ServiceAccount", "default")}


@pytest.mark.parametrize("obj", [
    {"kind": "ConfigMap", "data": {"a": "b"}},
    {"kind": "Service", "spec": {"selector": {"app": "x"}}},
    {"kind": "Secret", "stringData": {"a": "b"}},
])
def test_pod_references_of_non_workloads_is_empty(obj: Dict[str, Any]) -> None:
    assert selection.pod_references(obj) == set()


def test_pod_references_skips_nameless_references() -> None:
    obj = {"kind": "Pod", "spec": {"serviceAccountName": "sa",
                                   "volumes": [{"name": "v", "secret": {}}, {"name": "w", "configMap": {}}],
                                   "containers": [{"name": "c", "envFrom": [{"secretRef": {}}]}]}}
    assert selection.pod_references(obj) == {("ServiceAccount", "sa")}


# -- install hooks no job_* switch gates ------------------------------------------

def test_install_takes_every_install_hook_whatever_renders_it_and_orders_it_by_its_dependencies() -> None:
    """mariadb's exporter user job sits under manifests.monitoring: no job_* switch
    turns it off, so the release runs without hooks and the install phase runs it."""
    hook = {"helm.sh/hook": "post-install,post-upgrade"}
    init = [{"name": "init", "image": "entrypoint", "env": [{"name": "DEPENDENCY_JOBS", "value": "db-sync"}]}]
    rendered = [
        render.Rendered(_job("db-sync", hook), "templates/job-db-sync.yaml"),
        render.Rendered(_job("exporter-user", hook, initContainers=init), "templates/monitoring/exporter-job-user.yaml"),
        render.Rendered(_obj("Pod", "test", annotations={"helm.sh/hook": "test-success"}), "templates/pod-test.yaml"),
        render.Rendered(_job("db-drop", {"helm.sh/hook": "pre-delete"}), "templates/job-db-drop.yaml"),
        render.Rendered(_job("other", {"helm.sh/hook": "pre-delete"}), "templates/monitoring/cleanup.yaml"),
    ]
    chosen = selection.select(rendered, "install", "templates", namespace="openstack")
    assert _keys(chosen) == ["Job/db-sync", "Job/exporter-user"]
    assert [[r.name for r in w] for w in selection.waves(chosen)] == [["db-sync"], ["exporter-user"]]
    # An explicit list is taken as it is.
    assert _keys(selection.select(rendered, "install", "templates", ["job-db-sync"])) == ["Job/db-sync"]
