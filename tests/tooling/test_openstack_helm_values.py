"""The values files openstack-helm ships per OpenStack release, as the tests
find them (tests/support/openstack_helm.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import openstack_helm


def fake_source(tmp_path: Path, overrides: dict) -> Path:
    """A charts directory with helm-toolkit and ``{chart: [release, ...]}``
    values files."""
    (tmp_path / "helm-toolkit").mkdir()
    (tmp_path / "helm-toolkit" / "Chart.yaml").write_text("name: helm-toolkit\n")
    for chart, releases in overrides.items():
        folder = tmp_path / "values_overrides" / chart
        folder.mkdir(parents=True)
        for release in releases:
            (folder / f"{release}-ubuntu_noble.yaml").write_text(f"# {chart} {release}\n")
    return tmp_path


def test_the_override_of_a_release_is_the_shipped_file(tmp_path: Path) -> None:
    src = fake_source(tmp_path, {"nova": ["2025.1", "2025.2"]})
    path = openstack_helm.values_override("nova", "2025.2", source=src)
    assert path == src / "values_overrides" / "nova" / "2025.2-ubuntu_noble.yaml"
    assert path.read_text() == "# nova 2025.2\n"


def test_a_missing_release_names_the_file_and_the_releases_the_chart_has(tmp_path: Path) -> None:
    src = fake_source(tmp_path, {"nova": ["2025.1", "2025.2"]})
    with pytest.raises(openstack_helm.ChartsMissing) as raised:
        openstack_helm.values_override("nova", "2026.1", source=src)
    message = str(raised.value)
    assert "2026.1-ubuntu_noble.yaml does not exist" in message
    assert "releases for nova: 2025.1, 2025.2" in message


def test_a_chart_without_overrides_is_an_error_for_values_override(tmp_path: Path) -> None:
    src = fake_source(tmp_path, {})
    with pytest.raises(openstack_helm.ChartsMissing, match="releases for openvswitch: none"):
        openstack_helm.values_override("openvswitch", "2025.2", source=src)


def test_release_values_are_empty_only_for_a_chart_that_ships_none(tmp_path: Path) -> None:
    src = fake_source(tmp_path, {"libvirt": ["2025.2"], "nova": ["2025.1"]})
    assert openstack_helm.release_values("openvswitch", "2025.2", source=src) == []
    assert openstack_helm.release_values("libvirt", "2025.2", source=src) == [
        src / "values_overrides" / "libvirt" / "2025.2-ubuntu_noble.yaml"]
    with pytest.raises(openstack_helm.ChartsMissing, match="releases for nova: 2025.1"):
        openstack_helm.release_values("nova", "2025.2", source=src)


def test_the_shared_charts_ship_every_known_release_for_the_compute_kit() -> None:
    """The shared test data: each chart with overrides has all three
    releases, and openvswitch, a node agent, has none."""
    src = openstack_helm.source_dir()
    for chart in ("mariadb", "rabbitmq", "keystone", "placement", "nova", "neutron", "libvirt",
                  "cinder", "barbican"):
        for release in openstack_helm.RELEASES:
            assert openstack_helm.values_override(chart, release).is_file(), (chart, release)
    assert openstack_helm.release_values("openvswitch", "2025.2") == []
