"""plugins/module_utils/drift/chart.py: whether the chart asked for is the one
the deployed revision was made of, against a record as Helm stores it."""

from __future__ import annotations

import base64
import io
import tarfile
from pathlib import Path
from typing import Any, Dict

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.drift.chart import changes

CHART_YAML = "apiVersion: v2\nname: svc\nversion: 0.1.0\nappVersion: \"2026.1\"\n"
VALUES = {"pod": {"replicas": {"api": 1}}, "conf": {"debug": False}}
TEMPLATES = {
    "templates/deployment.yaml": "kind: Deployment\nmetadata:\n  name: svc-api\n",
    "templates/_helpers.tpl": "{{- define \"svc.name\" -}}svc{{- end -}}\n",
}
FILES = {"files/svc.conf": "[DEFAULT]\ndebug = false\n"}


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def stored() -> Dict[str, Any]:
    """A release record's `chart`, as Helm keeps it: metadata, templates and files base64, values parsed."""
    return {"metadata": {"name": "svc", "version": "0.1.0", "appVersion": "2026.1"},
            "templates": [{"name": n, "data": _b64(t)} for n, t in TEMPLATES.items()],
            "files": [{"name": n, "data": _b64(t)} for n, t in FILES.items()],
            "values": VALUES}


@pytest.fixture(name="chart")
def _chart(tmp_path: Path) -> Path:
    root = tmp_path / "svc"
    for name, text in {"Chart.yaml": CHART_YAML, "values.yaml": yaml.safe_dump(VALUES),
                       **TEMPLATES, **FILES}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_the_same_chart_directory_is_no_change(chart: Path) -> None:
    assert changes(str(chart), "", stored()) == []


def test_a_template_edited_is_named(chart: Path) -> None:
    (chart / "templates" / "deployment.yaml").write_text("kind: Deployment\nmetadata:\n  name: svc-api-2\n")
    assert changes(str(chart), "", stored()) == ["svc-0.1.0 templates/deployment.yaml"]


def test_a_template_added_is_named(chart: Path) -> None:
    (chart / "templates" / "service.yaml").write_text("kind: Service\n")
    assert changes(str(chart), "", stored()) == ["svc-0.1.0 templates/service.yaml"]


def test_a_template_removed_is_named(chart: Path) -> None:
    (chart / "templates" / "_helpers.tpl").unlink()
    assert changes(str(chart), "", stored()) == ["svc-0.1.0 templates/_helpers.tpl"]


def test_a_file_helm_kept_edited_is_named(chart: Path) -> None:
    (chart / "files" / "svc.conf").write_text("[DEFAULT]\ndebug = true\n")
    assert changes(str(chart), "", stored()) == ["svc-0.1.0 files/svc.conf"]


def test_values_yaml_changed_is_named(chart: Path) -> None:
    (chart / "values.yaml").write_text(yaml.safe_dump({"pod": {"replicas": {"api": 2}}, "conf": {"debug": False}}))
    assert changes(str(chart), "", stored()) == ["svc-0.1.0 values.yaml"]


def test_values_yaml_written_otherwise_but_equal_is_no_change(chart: Path) -> None:
    (chart / "values.yaml").write_text("# the defaults\nconf: {debug: false}\npod:\n  replicas:\n    api: 1\n")
    assert changes(str(chart), "", stored()) == []


def with_dependency(record: Dict[str, Any], section: Any) -> Dict[str, Any]:
    """A chart with a dependency as Helm 3 and 4 store it: its values gain a section for the
    dependency, holding an empty `global`, whatever values.yaml says."""
    record["metadata"]["dependencies"] = [{"name": "helm-toolkit", "version": ">= 0.1.0",
                                           "repository": "file://../helm-toolkit", "enabled": True}]
    record["values"] = dict(record["values"], **{"helm-toolkit": section})
    return record


def test_the_values_helm_adds_for_a_dependency_are_no_change(chart: Path) -> None:
    assert changes(str(chart), "", with_dependency(stored(), {"global": {}})) == []


def test_a_dependencys_values_are_still_compared(chart: Path) -> None:
    (chart / "values.yaml").write_text(yaml.safe_dump(dict(VALUES, **{"helm-toolkit": {"a": 1}})))
    assert changes(str(chart), "", with_dependency(stored(), {"a": 1, "global": {}})) == []
    assert changes(str(chart), "", with_dependency(stored(), {"a": 2, "global": {}})) == ["svc-0.1.0 values.yaml"]
    assert changes(str(chart), "", with_dependency(stored(), {"global": {}})) == ["svc-0.1.0 values.yaml"]


def test_a_section_helm_made_for_a_dependency_listed_elsewhere_is_no_change(chart: Path) -> None:
    # A dependency of requirements.yaml (rabbitmq's helm-toolkit) is not in Chart.yaml's metadata.
    record = stored()
    record["values"] = dict(record["values"], other={"global": {}})
    assert changes(str(chart), "", record) == []


def test_a_section_of_a_name_that_is_no_dependency_is_compared(chart: Path) -> None:
    record = stored()
    record["values"] = dict(record["values"], other={"global": {}, "a": 1})
    assert changes(str(chart), "", record) == ["svc-0.1.0 values.yaml"]


def test_values_yaml_keys_written_as_numbers_are_the_strings_helm_stores(chart: Path) -> None:
    (chart / "values.yaml").write_text(yaml.safe_dump(dict(VALUES, listeners={"tcp": {1: "0.0.0.0:5672"}})))
    record = stored()
    record["values"] = dict(VALUES, listeners={"tcp": {"1": "0.0.0.0:5672"}})
    assert changes(str(chart), "", record) == []
    record["values"] = dict(VALUES, listeners={"tcp": {"2": "0.0.0.0:5672"}})
    assert changes(str(chart), "", record) == ["svc-0.1.0 values.yaml"]


def test_the_changes_are_named_together_values_yaml_last(chart: Path) -> None:
    (chart / "templates" / "service.yaml").write_text("kind: Service\n")
    (chart / "templates" / "deployment.yaml").write_text("kind: Deployment\n")
    (chart / "values.yaml").write_text("{}\n")
    assert changes(str(chart), "", stored()) == ["svc-0.1.0 templates/deployment.yaml",
                                                 "svc-0.1.0 templates/service.yaml", "svc-0.1.0 values.yaml"]


def test_a_version_changed_is_named_old_to_new_and_nothing_else(chart: Path) -> None:
    (chart / "Chart.yaml").write_text(CHART_YAML.replace("0.1.0", "0.2.0"))
    (chart / "templates" / "deployment.yaml").write_text("kind: Deployment\n")
    assert changes(str(chart), "", stored()) == ["svc-0.1.0 -> svc-0.2.0"]


def test_another_chart_name_is_named(chart: Path) -> None:
    (chart / "Chart.yaml").write_text(CHART_YAML.replace("name: svc", "name: other"))
    assert changes(str(chart), "", stored()) == ["svc-0.1.0 -> other-0.1.0"]


def test_a_hidden_file_helm_kept_is_read_as_helm_reads_it(chart: Path) -> None:
    """Helm keeps a chart's .helmignore among its files (as `helm create` makes it): the same one is no change."""
    (chart / ".helmignore").write_text(".git/\n*.swp\n")
    record = stored()
    record["files"].append({"name": ".helmignore", "data": _b64(".git/\n*.swp\n")})
    assert changes(str(chart), "", record) == []
    (chart / ".helmignore").write_text(".git/\n")
    assert changes(str(chart), "", record) == ["svc-0.1.0 .helmignore"]


def test_a_hidden_template_helm_ignores_is_not_a_change(chart: Path) -> None:
    """Helm never loads templates/.* (an editor's swap file, say)."""
    (chart / "templates" / ".deployment.yaml.swp").write_text("swap")
    assert changes(str(chart), "", stored()) == []


def test_a_file_helm_did_not_keep_is_not_a_change(chart: Path) -> None:
    """Outside templates/, a file the record lacks may be one .helmignore leaves out (a README, CI files)."""
    (chart / "README.md").write_text("# svc\n")
    (chart / "ci").mkdir()
    (chart / "ci" / "values-test.yaml").write_text("a: 1\n")
    (chart / ".helmignore").write_text("ci/\n")
    assert changes(str(chart), "", stored()) == []


def test_a_subchart_and_a_packaged_dependency_are_not_the_charts_own(chart: Path) -> None:
    (chart / "charts" / "helm-toolkit" / "templates").mkdir(parents=True)
    (chart / "charts" / "helm-toolkit" / "templates" / "_x.tpl").write_text("x")
    (chart / "helm-toolkit-0.1.0.tgz").write_bytes(b"not read")
    assert changes(str(chart), "", stored()) == []


def _archive(chart: Path, out: Path, extra: Dict[str, str]) -> Path:
    with tarfile.open(out, "w:gz") as archive:
        for path in sorted(p for p in chart.rglob("*") if p.is_file()):
            archive.add(str(path), arcname=f"svc/{path.relative_to(chart).as_posix()}")
        for name, text in extra.items():
            data = text.encode()
            info = tarfile.TarInfo(f"svc/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return out


def test_an_archive_of_the_same_chart_is_no_change(chart: Path, tmp_path: Path) -> None:
    packaged = _archive(chart, tmp_path / "svc-0.1.0.tgz", {"charts/helm-toolkit/templates/_x.tpl": "x"})
    assert changes(str(packaged), "", stored()) == []


def test_an_archive_with_a_template_edited_names_it(chart: Path, tmp_path: Path) -> None:
    (chart / "templates" / "deployment.yaml").write_text("kind: Deployment\n")
    packaged = _archive(chart, tmp_path / "svc-0.1.0.tgz", {"templates/configmap.yaml": "kind: ConfigMap\n"})
    assert changes(str(packaged), "", stored()) == ["svc-0.1.0 templates/configmap.yaml",
                                                    "svc-0.1.0 templates/deployment.yaml"]


def test_an_archive_of_another_version_is_named(chart: Path, tmp_path: Path) -> None:
    (chart / "Chart.yaml").write_text(CHART_YAML.replace("0.1.0", "0.1.1"))
    packaged = _archive(chart, tmp_path / "svc-0.1.1.tgz", {})
    assert changes(str(packaged), "", stored()) == ["svc-0.1.0 -> svc-0.1.1"]


@pytest.mark.parametrize("ref, version, expected", [
    ("openstack-helm/svc", "0.1.0", []),
    ("openstack-helm/svc", "v0.1.0", []),  # Helm accepts the version with a v
    ("oci://registry.example/charts/svc", "0.1.0", []),
    ("openstack-helm/svc", "", []),  # no version asked: the name alone
    ("openstack-helm/svc", "0.2.0", ["svc-0.1.0 -> svc-0.2.0"]),
    ("openstack-helm/other", "0.1.0", ["svc-0.1.0 -> other-0.1.0"]),
    ("openstack-helm/other", "", ["svc-0.1.0 -> other-(latest)"]),
])
def test_a_repository_chart_is_compared_by_name_and_version(ref: str, version: str, expected: Any) -> None:
    """A published version does not change: its files are not read (there are none on disk)."""
    record = stored()
    record["templates"] = []  # nothing the files could be compared with
    assert changes(ref, version, record) == expected
