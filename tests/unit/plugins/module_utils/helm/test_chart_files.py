"""plugins/module_utils/helm/chart_files.py: a chart on disk (directory or
archive) read from its own Chart.yaml and values.yaml without a Helm
process, each once; Helm asked, as before, for a chart in a repository and
wherever Helm might read the files otherwise."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.helm.chart_files import ChartSource, top_files
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm, Result

CHART_YAML = "apiVersion: v2\nname: keystone\nversion: 0.3.1\nappVersion: '2025.1'\n"
VALUES_YAML = "manifests:\n  job_db_sync: true\n"


class _Cli(Helm):
    """A Helm that answers `helm show` for a chart it made up, each call logged."""

    def __init__(self) -> None:
        super().__init__("helm", _version="v3.19.0")
        self.ran: List[List[str]] = []

    def _run_once(self, args: Sequence[str], timeout: Any) -> Result:
        self.ran.append(list(args))
        out = {"chart": "name: from-helm\nversion: 9.9.9\n", "values": "from: helm\n"}[args[1]]
        return Result(["helm", *args], 0, out, "")


def _chart_dir(tmp_path: Path, files: Optional[Dict[str, str]] = None) -> Path:
    chart = tmp_path / "keystone"
    chart.mkdir()
    for name, text in (files if files is not None else {"Chart.yaml": CHART_YAML, "values.yaml": VALUES_YAML}).items():
        (chart / name).write_text(text)
    return chart


def _archive(tmp_path: Path, files: Dict[str, str]) -> Path:
    path = tmp_path / "keystone-0.3.1.tgz"
    with tarfile.open(path, "w:gz") as archive:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def test_a_chart_directory_is_read_from_its_files_once_without_helm(tmp_path: Path) -> None:
    cli = _Cli()
    chart = ChartSource(cli, str(_chart_dir(tmp_path)), "0.3.1")
    assert chart.on_disk and chart.metadata() == yaml.safe_load(CHART_YAML)
    assert chart.values_text() == VALUES_YAML
    (tmp_path / "keystone" / "Chart.yaml").write_text(CHART_YAML.replace("0.3.1", "0.4.0"))
    assert chart.metadata()["version"] == "0.3.1"  # read once
    assert cli.ran == []


def test_a_chart_archive_is_read_from_its_top_directory_without_helm(tmp_path: Path) -> None:
    cli = _Cli()
    path = _archive(tmp_path, {"keystone/Chart.yaml": "\ufeff" + CHART_YAML, "keystone/./values.yaml": VALUES_YAML,
                               "keystone/templates/values.yaml": "other: file\n",
                               "keystone/charts/helm-toolkit/Chart.yaml": "name: helm-toolkit\n"})
    chart = ChartSource(cli, str(path), None)
    assert (chart.metadata()["version"], chart.values_text()) == ("0.3.1", VALUES_YAML)
    assert cli.ran == []


def test_a_chart_without_values_yaml_has_no_defaults(tmp_path: Path) -> None:
    cli = _Cli()
    assert ChartSource(cli, str(_chart_dir(tmp_path, {"Chart.yaml": CHART_YAML})), None).values_text() == ""
    assert cli.ran == []


def test_a_chart_in_a_repository_is_helms_to_show_once(tmp_path: Path) -> None:
    cli = _Cli()
    chart = ChartSource(cli, "openstack-helm/keystone", "0.3.1")
    assert not chart.on_disk
    assert chart.metadata() == chart.metadata() == {"name": "from-helm", "version": "9.9.9"}
    assert chart.values_text() == "from: helm\n"
    assert cli.ran == [["show", "chart", "openstack-helm/keystone", "--version", "0.3.1"],
                       ["show", "values", "openstack-helm/keystone", "--version", "0.3.1"]]


@pytest.mark.parametrize("files", [
    {},  # no Chart.yaml: Helm says so
    {"Chart.yaml": CHART_YAML.replace("0.3.1", "1.0")},  # a number to YAML: Helm reads it its own way
    {"Chart.yaml": CHART_YAML.replace("0.3.1", "not-a-version")},  # Helm refuses it, in its words
    {"Chart.yaml": CHART_YAML.replace("apiVersion: v2\n", "")},
    {"Chart.yaml": "name: [keystone\n"},
    {"Chart.yaml": CHART_YAML, ".helmignore": "# editor files\n*.swp\n*.yaml\n"},  # would leave Chart.yaml out
    {"Chart.yaml": CHART_YAML, ".helmignore": "/values.yaml\n"},
    {"Chart.yaml": CHART_YAML, ".helmignore": "!templates/\n"},  # a negation ignores all it does not match
    {"Chart.yaml": CHART_YAML, ".helmignore": "[Vv]alues.yaml\n"},
])
def test_a_directory_helm_might_read_otherwise_is_left_to_helm(tmp_path: Path, files: Dict[str, str]) -> None:
    cli = _Cli()
    chart = ChartSource(cli, str(_chart_dir(tmp_path, files)), None)
    assert chart.metadata()["name"] == "from-helm" and chart.values_text() == "from: helm\n"
    assert [a[:2] for a in cli.ran] == [["show", "chart"], ["show", "values"]]


def test_a_helmignore_that_leaves_both_files_in_is_no_reason_to_ask_helm(tmp_path: Path) -> None:
    chart = _chart_dir(tmp_path, {"Chart.yaml": CHART_YAML, "values.yaml": VALUES_YAML,
                                  ".helmignore": "# helm create's\n.DS_Store\n.git/\n*.swp\n*.tmp\n*~\n.idea/\n"})
    assert top_files(str(chart)) == {"Chart.yaml": CHART_YAML, "values.yaml": VALUES_YAML}


@pytest.mark.parametrize("files", [
    {"Chart.yaml": CHART_YAML},  # not in a top directory
    {"keystone/Chart.yaml": CHART_YAML, "README.md": "x"},
    {"keystone/Chart.yaml": CHART_YAML, "other/Chart.yaml": CHART_YAML},  # two charts
    {"keystone/../Chart.yaml": CHART_YAML},
    {"keystone/templates/x.yaml": "a: 1\n"},  # no Chart.yaml
])
def test_an_archive_that_is_not_plainly_one_chart_is_left_to_helm(tmp_path: Path, files: Dict[str, str]) -> None:
    assert top_files(str(_archive(tmp_path, files))) is None


def test_a_file_that_is_no_archive_is_left_to_helm(tmp_path: Path) -> None:
    (tmp_path / "chart.tgz").write_text("not gzip")
    (tmp_path / "truncated.tgz").write_bytes(_archive(tmp_path, {"keystone/Chart.yaml": CHART_YAML}).read_bytes()[:30])
    assert top_files(str(tmp_path / "chart.tgz")) is None and top_files(str(tmp_path / "truncated.tgz")) is None
