"""plugins/module_utils/helm/render.py: `helm template` output and plain manifests into objects,
and where the helm binary comes from."""

from __future__ import annotations

import stat
from collections import Counter
from pathlib import Path

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.helm import cli as helm, render
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError
from ansible_collections.lcm.openstack.plugins.module_utils.helm.process import HelmError
from support.paths import UNIT_FIXTURES

FIXTURE = UNIT_FIXTURES / "phase" / "rendered_keystone.out"
TEXT = FIXTURE.read_text()


# -- parse_manifest on the keystone fixture --------------------------------------

def test_parse_fixture_count_and_kinds() -> None:
    objects = render.parse_manifest(TEXT)
    assert len(objects) == 58
    assert Counter(r.kind for r in objects) == {
        "ServiceAccount": 12, "Role": 12, "RoleBinding": 12, "Job": 10, "Secret": 6,
        "ConfigMap": 3, "Deployment": 1, "Service": 1, "Pod": 1}
    # every document of the fixture is one object
    assert len(objects) == sum(1 for d in yaml.safe_load_all(TEXT) if d)


def test_parse_fixture_keeps_the_source_chart_relative() -> None:
    objects = render.parse_manifest(TEXT)
    assert all(r.source.startswith("templates/") and r.source.endswith(".yaml") for r in objects)
    assert not any(r.source.startswith("keystone/") for r in objects)
    by_key = {r.key: r.source for r in objects}
    assert by_key["Job/keystone-db-sync"] == "templates/job-db-sync.yaml"
    # the RBAC a job template renders carries that template's path
    assert by_key["ServiceAccount/keystone-db-sync"] == "templates/job-db-sync.yaml"
    assert by_key["Role/keystone-openstack-keystone-db-sync"] == "templates/job-db-sync.yaml"
    assert by_key["RoleBinding/keystone-keystone-db-sync"] == "templates/job-db-sync.yaml"
    assert by_key["Pod/keystone-test"] == "templates/pod-rally-test.yaml"
    assert by_key["Secret/keystone-db-admin"] == by_key["Secret/keystone-db-user"] == "templates/secret-db.yaml"
    # Service and Deployment keystone-api are two objects of one name
    assert by_key["Service/keystone-api"] == "templates/service-api.yaml"
    assert by_key["Deployment/keystone-api"] == "templates/deployment-api.yaml"


def test_parse_fixture_keeps_the_objects_intact() -> None:
    by_key = {r.key: r.obj for r in render.parse_manifest(TEXT)}
    job = by_key["Job/keystone-db-init"]
    assert job["apiVersion"] == "batch/v1"
    assert job["metadata"]["annotations"]["helm.sh/hook-weight"] == "-5"
    assert by_key["Secret/keystone-db-user"]["stringData"]["DB_CONNECTION"] == (
        "mysql+pymysql://keystone:Ks-Db-Passw0rd-7f3a@mariadb/keystone")
    # a block scalar survives the split on ---
    assert "db_sync" in by_key["ConfigMap/keystone-bin"]["data"]["db-sync.sh"]


def test_rendered_defaults() -> None:
    r = render.Rendered({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
    assert (r.kind, r.name, r.key, r.source, r.wave) == ("ConfigMap", "x", "ConfigMap/x", "", (0,))
    assert render.Rendered({}).key == "/"


# -- parse_manifest edge cases ---------------------------------------------------

def test_subchart_source_keeps_charts_prefix() -> None:
    text = ("---\n# Source: keystone/charts/helm-toolkit/templates/cm.yaml\n"
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ht\n")
    [r] = render.parse_manifest(text)
    assert r.source == "charts/helm-toolkit/templates/cm.yaml"


def test_document_without_source_comment_has_empty_source() -> None:
    [r] = render.parse_manifest("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n")
    assert (r.key, r.source) == ("ConfigMap/plain", "")


def test_each_document_keeps_its_own_source() -> None:
    text = ("---\n# Source: svc/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
            "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"
            "---\n# Source: svc/templates/c.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
    assert [(r.name, r.source) for r in render.parse_manifest(text)] == [
        ("a", "templates/a.yaml"), ("b", ""), ("c", "templates/c.yaml")]


@pytest.mark.parametrize("kind", ["List", "ConfigMapList"])
def test_list_kinds_are_expanded(kind: str) -> None:
    text = (f"---\n# Source: svc/templates/list.yaml\napiVersion: v1\nkind: {kind}\nitems:\n"
            "  - apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: one\n"
            "  - apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: two\n"
            "---\n# Source: svc/templates/after.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n")
    objects = render.parse_manifest(text)
    assert [(r.key, r.source) for r in objects] == [
        ("ConfigMap/one", "templates/list.yaml"), ("ConfigMap/two", "templates/list.yaml"),
        ("Secret/s", "templates/after.yaml")]


def test_empty_list_kind_gives_no_objects() -> None:
    """A template that ranges over nothing renders `kind: List` with an empty `items:`."""
    text = "---\n# Source: svc/templates/list.yaml\napiVersion: v1\nkind: List\nitems:\n"
    assert render.parse_manifest(text) == []


def test_list_item_that_is_not_an_object_is_refused() -> None:
    text = ("---\n# Source: svc/templates/list.yaml\napiVersion: v1\nkind: List\nitems:\n"
            "  - just a string\n")
    with pytest.raises(InputError) as err:
        render.parse_manifest(text)
    assert "templates/list.yaml" in str(err.value)


@pytest.mark.parametrize("text", [
    "",
    "---\n",
    "---\n---\n---\n",
    "   \n\n",
    "---\n# Source: svc/templates/off.yaml\n---\n# Source: svc/templates/also-off.yaml\n# only comments\n",
])
def test_empty_documents_are_skipped(text: str) -> None:
    assert render.parse_manifest(text) == []


def test_empty_documents_between_objects_are_skipped() -> None:
    text = ("---\n# Source: svc/templates/off.yaml\n"
            "---\n# Source: svc/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
            "---\n\n---\n")
    assert [r.key for r in render.parse_manifest(text)] == ["ConfigMap/a"]


@pytest.mark.parametrize("body", [
    "just a string",
    "- apiVersion: v1\n  kind: ConfigMap\n",
    "metadata:\n  name: nokind\napiVersion: v1\n",
    "kind: ConfigMap\nmetadata:\n  name: noversion\n",
    "42",
])
def test_non_object_is_refused_naming_the_template(body: str) -> None:
    text = f"---\n# Source: svc/templates/broken.yaml\n{body}\n"
    with pytest.raises(InputError) as err:
        render.parse_manifest(text)
    msg = str(err.value)
    assert "templates/broken.yaml" in msg
    assert "not a Kubernetes object" in msg
    assert "apiVersion and kind" in msg


def test_invalid_yaml_is_refused_naming_the_template() -> None:
    text = ("---\n# Source: svc/templates/ok.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n"
            "---\n# Source: svc/templates/bad.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n"
            "  name: [unclosed\n  labels: {a: b\n")
    with pytest.raises(HelmError) as err:
        render.parse_manifest(text)
    assert "templates/bad.yaml is not valid YAML" in str(err.value)


def test_invalid_yaml_without_source() -> None:
    with pytest.raises(HelmError) as err:
        render.parse_manifest("key: value\n  - broken: [\n")
    assert "the chart is not valid YAML" in str(err.value)


# -- load_manifests --------------------------------------------------------------

CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "inline"}, "data": {"a": "b"}}


def test_load_inline_dict() -> None:
    [r] = render.load_manifests([CM])
    assert (r.key, r.source, r.obj) == ("ConfigMap/inline", "", CM)
    assert r.obj is not CM


def test_load_inline_list() -> None:
    lst = {"apiVersion": "v1", "kind": "List", "items": [CM, dict(CM, metadata={"name": "two"})]}
    assert [r.key for r in render.load_manifests([lst])] == ["ConfigMap/inline", "ConfigMap/two"]


def test_load_inline_non_object_is_refused() -> None:
    with pytest.raises(InputError) as err:
        render.load_manifests([{"metadata": {"name": "x"}}])
    assert "an inline manifest" in str(err.value)


def test_load_file(tmp_path: Path) -> None:
    path = tmp_path / "objects.yaml"
    path.write_text("---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n"
                    "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
    objects = render.load_manifests([str(path), CM])
    assert [(r.key, r.source) for r in objects] == [
        ("Secret/s", str(path)), ("ConfigMap/c", str(path)), ("ConfigMap/inline", "")]


def test_load_file_keeps_helm_source(tmp_path: Path) -> None:
    path = tmp_path / "rendered.yaml"
    path.write_text(TEXT)
    objects = render.load_manifests([str(path)])
    assert len(objects) == 58
    assert {r.key: r.source for r in objects}["Job/keystone-db-sync"] == "templates/job-db-sync.yaml"


@pytest.mark.parametrize("item", ["/nonexistent/manifest.yaml", 42, None, ["a", "list"]])
def test_load_refuses_what_is_neither_object_nor_file(item: object) -> None:
    with pytest.raises(InputError) as err:
        render.load_manifests([item])
    assert "source.manifests" in str(err.value)
    assert repr(item) in str(err.value)


def test_load_refuses_a_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        render.load_manifests([str(tmp_path)])


# -- find_helm -------------------------------------------------------------------

def _executable(path: Path) -> str:
    path.write_text("#!/bin/sh\necho fake helm\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)


@pytest.fixture
def empty_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH holds only an empty directory: no helm there."""
    d = tmp_path / "empty-bin"
    d.mkdir()
    monkeypatch.setenv("PATH", str(d))
    return d


def test_find_helm_option_first(tmp_path: Path, empty_path: Path) -> None:
    option = _executable(tmp_path / "helm-option")
    env_bin = _executable(tmp_path / "helm-env")
    _executable(empty_path / "helm")
    assert helm.find_helm(option, {"HELM_BIN": env_bin}) == option


def test_find_helm_env_second(tmp_path: Path, empty_path: Path) -> None:
    env_bin = _executable(tmp_path / "helm-env")
    _executable(empty_path / "helm")
    assert helm.find_helm(None, {"HELM_BIN": env_bin}) == env_bin
    assert helm.find_helm("", {"HELM_BIN": env_bin}) == env_bin


def test_find_helm_on_path_last(empty_path: Path) -> None:
    on_path = _executable(empty_path / "helm")
    assert helm.find_helm(None, {}) == on_path
    assert helm.find_helm(None, {"HELM_BIN": ""}) == on_path


def test_find_helm_reads_the_env_it_is_given_not_os_environ(
        tmp_path: Path, empty_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELM_BIN", _executable(tmp_path / "helm-os-env"))
    with pytest.raises(HelmError):
        helm.find_helm(None, {})


def test_find_helm_not_found(empty_path: Path) -> None:
    with pytest.raises(HelmError) as err:
        helm.find_helm(None, {})
    msg = str(err.value)
    assert "binary_path" in msg and "HELM_BIN" in msg
    assert "helm is not on PATH" in msg


@pytest.mark.parametrize("how", ["missing", "not-executable", "directory"])
def test_find_helm_unusable_option_is_named(how: str, tmp_path: Path, empty_path: Path) -> None:
    _executable(empty_path / "helm")  # no fallback when the option is given
    candidate = tmp_path / "helm-opt"
    if how == "not-executable":
        candidate.write_text("#!/bin/sh\n")
        candidate.chmod(0o644)
    elif how == "directory":
        candidate.mkdir()
    with pytest.raises(HelmError) as err:
        helm.find_helm(str(candidate), {})
    msg = str(err.value)
    assert str(candidate) in msg
    assert "binary_path" in msg and "HELM_BIN" in msg


def test_find_helm_unusable_env_is_named(tmp_path: Path, empty_path: Path) -> None:
    _executable(empty_path / "helm")
    missing = str(tmp_path / "no-such-helm")
    with pytest.raises(HelmError) as err:
        helm.find_helm(None, {"HELM_BIN": missing})
    assert missing in str(err.value)


def test_find_helm_on_path_not_executable_is_skipped(empty_path: Path) -> None:
    (empty_path / "helm").write_text("#!/bin/sh\n")
    (empty_path / "helm").chmod(0o644)
    with pytest.raises(HelmError):
        helm.find_helm(None, {})
