"""plugins/module_utils/helm/ownership.py: Helm's refusal to take an object
another release owns, said as the object, its owner and the value that
switches it off. Helm's words from fixtures/release/ownership.yaml (captured
from Helm 3 and Helm 4 on the bed); a release brought to present on a fake
Helm that refuses the install as they do, with a chart on disk.
(On the bed, with the stock mariadb chart: tests/integration/test_helm_ownership.py.)"""

from __future__ import annotations

import tarfile
from pathlib import Path
from typing import Any, Dict, List, Sequence

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.helm import ownership
from ansible_collections.lcm.openstack.plugins.module_utils.helm.chart_files import chart_file
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm, HelmError, Result
from ansible_collections.lcm.openstack.plugins.module_utils.helm.release import ReleaseManager, ReleaseRequest
from support.fake_helm import start_at_once
from support.paths import UNIT_FIXTURES

CASES = yaml.safe_load((UNIT_FIXTURES / "release" / "ownership.yaml").read_text())
HELM_SAID = next(c for c in CASES if c["case"] == "helm 3, the same release name in another namespace")["stderr"]
CRD = "databases.mariadb.osh.openstack.org"

# A chart shaped as the stock mariadb chart is: its CRDs in templates/crds.yaml,
# helpers defined first, the objects gated on manifests.crds.
CHART_YAML = "apiVersion: v2\nname: mariadb\nversion: 0.1.0\n"
VALUES = {"manifests": {"crds": True, "statefulset": True, "monitoring": {"prometheus": {"configmap_bin": True}}}}
CRDS_TEMPLATE = """{{/* The API group's objects, cluster scoped. */}}
{{- define "mariadb.crd.names" }}
kind: Database
{{- end }}
{{- if .Values.manifests.crds }}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: databases.mariadb.osh.openstack.org
{{- end }}
"""
RENDERED = f"""---
# Source: mariadb/templates/statefulset.yaml
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: mariadb-server
---
# Source: mariadb/templates/crds.yaml
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {CRD}
"""


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_the_object_and_its_owner_are_read_from_what_helm_said(case: Dict[str, Any]) -> None:
    found = ownership.conflict(case["stderr"], *case["release"])
    assert (list(found.__dict__.values()) if found else None) == case["conflict"]


@pytest.mark.parametrize("template, switch", [
    (CRDS_TEMPLATE, "manifests.crds"),
    ("{{- if and .Values.manifests.monitoring.prometheus.configmap_bin .Values.monitoring.prometheus.enabled }}",
     "manifests.monitoring.prometheus.configmap_bin"),
    ("{{- $envAll := . }}\n{{- if $envAll.Values.manifests.statefulset }}", "manifests.statefulset"),
    ("{{- if or .Values.manifests.crds .Values.force }}", ""),  # one value does not switch an `or` off
    ("{{- if not .Values.manifests.crds }}", ""),
    ("{{- if .Values.manifests.absent }}", ""),  # not a value of the chart
    ("{{- if .Values.manifests }}", ""),
    ("kind: ConfigMap\n", ""),
])
def test_the_switch_is_the_manifests_value_the_template_is_gated_on(template: str, switch: str) -> None:
    assert ownership.switch(template, VALUES) == switch


def _chart(tmp_path: Path, archive: bool = False) -> str:
    top = tmp_path / "mariadb"
    (top / "templates").mkdir(parents=True)
    (top / "Chart.yaml").write_text(CHART_YAML)
    (top / "values.yaml").write_text(yaml.safe_dump(VALUES))
    (top / "templates" / "crds.yaml").write_text(CRDS_TEMPLATE)
    if not archive:
        return str(top)
    packed = tmp_path / "mariadb-0.1.0.tgz"
    with tarfile.open(packed, "w:gz") as tar:
        tar.add(top, arcname="mariadb")
    return str(packed)


@pytest.mark.parametrize("archive", [False, True], ids=["directory", "archive"])
def test_a_template_is_read_from_a_chart_on_disk(tmp_path: Path, archive: bool) -> None:
    chart = _chart(tmp_path, archive)
    assert chart_file(chart, "templates/crds.yaml") == CRDS_TEMPLATE
    assert chart_file(chart, "templates/absent.yaml") is None
    assert chart_file(chart, "../outside.yaml") is None
    assert chart_file("repo/mariadb", "templates/crds.yaml") is None  # not on disk: not read


class _Cli(Helm):
    """Helm with no release yet, rendering RENDERED, refusing the install with `said`."""

    def __init__(self, said: str) -> None:
        super().__init__("helm", _version="v3.22.0")
        self.said = said
        self.ran: List[List[str]] = []

    def _run_once(self, args: Sequence[str], timeout: Any) -> Result:
        self.ran.append(list(args))
        if args[0] == "upgrade":
            return Result(["helm", *args], 1, "Release \"mariadb\" does not exist. Installing it now.\n", self.said)
        if args[0] == "status":
            return Result(["helm", *args], 1, "", "Error: release: not found")
        return Result(["helm", *args], 0, {"history": "[]", "template": RENDERED}[args[0]], "")

    _start = start_at_once


def _install(chart: str, said: str, name: str = "mariadb", namespace: str = "ns2") -> HelmError:
    cli = _Cli(said)
    with pytest.raises(HelmError) as err:
        ReleaseManager(cli, ReleaseRequest(name=name, namespace=namespace, chart=chart, wait=False)).present()
    assert [a[0] for a in cli.ran].count("upgrade") == 1  # refused once, not tried again
    return err.value


def test_a_second_release_of_a_chart_with_a_cluster_scoped_object_is_told_the_owner_and_the_switch(
        tmp_path: Path) -> None:
    err = _install(_chart(tmp_path), HELM_SAID)
    assert str(err) == (
        "helm install of mariadb failed: CustomResourceDefinition databases.mariadb.osh.openstack.org belongs to "
        "release mariadb in namespace ns1: it is cluster-scoped, one object for the whole cluster, and only one "
        "release can own it. Fix: set manifests.crds to false in the values of release mariadb in namespace ns2 "
        "({manifests: {crds: false}}: it switches off templates/crds.yaml, which renders it) to use the one that "
        "is there")
    assert "\n" not in str(err)
    assert err.details["stderr"] == HELM_SAID  # what Helm said is kept beside
    assert "meta.helm.sh" not in str(err)


def test_a_chart_not_on_disk_is_told_the_template_to_switch_off(tmp_path: Path) -> None:
    err = _install("repo/mariadb", HELM_SAID)
    assert str(err).endswith("Fix: switch off the template templates/crds.yaml in the values of release mariadb "
                             "in namespace ns2 to use the one that is there")


def test_an_object_made_outside_helm_is_told_how_to_hand_it_over(tmp_path: Path) -> None:
    outside = next(c for c in CASES if c["case"] == "an object made outside Helm")["stderr"]
    err = _install(_chart(tmp_path, archive=True), outside)
    assert str(err).startswith("helm install of mariadb failed: CustomResourceDefinition "
                               f"{CRD} exists and belongs to no Helm release (it was made outside Helm): ")
    assert str(err).endswith("or hand it to release mariadb in namespace ns2: annotate it "
                             "meta.helm.sh/release-name=mariadb and meta.helm.sh/release-namespace=ns2 and label it "
                             "app.kubernetes.io/managed-by=Helm")


def test_another_failure_is_said_as_helm_said_it(tmp_path: Path) -> None:
    err = _install(_chart(tmp_path), "Error: INSTALLATION FAILED: context deadline exceeded\n")
    assert str(err) == "helm install of mariadb failed: INSTALLATION FAILED: context deadline exceeded"


def test_a_namespaced_object_of_another_release_without_a_render_names_no_template() -> None:
    found = ownership.Conflict("ConfigMap", "shared-bin", "openstack", "glance", "openstack")
    assert ownership.explain(found, "keystone", "openstack") == (
        "ConfigMap shared-bin in namespace openstack belongs to release glance in namespace openstack: only one "
        "release can own an object. Fix: leave it out of release keystone in namespace openstack (the chart value "
        "that switches off its template) to use the one that is there")


def test_a_rollback_refused_the_same_way_is_explained_too() -> None:
    upgrade = next(c for c in CASES if c["case"] == "an upgrade, another release in the same namespace")["stderr"]

    def refused() -> None:
        raise HelmError(f"helm rollback failed: {upgrade.removeprefix('Error: ')}", stderr=upgrade)
    with pytest.raises(HelmError) as err:
        with ownership.explained("keystone", "openstack"):
            refused()
    assert str(err.value).startswith("helm rollback failed: ConfigMap shared-bin in namespace openstack belongs to "
                                     "release glance in namespace openstack")
