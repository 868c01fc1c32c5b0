"""plugins/module_utils/phase/release_workloads.py: the release's own workloads
an install waits for last, and a test waits for before its pods run."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.helm.render import Rendered
from ansible_collections.lcm.openstack.plugins.module_utils.phase import release_workloads, selection

HELM = {"meta.helm.sh/release-name": "nova", "meta.helm.sh/release-namespace": "openstack"}


def _rendered() -> List[Rendered]:
    def obj(kind: str, name: str) -> Dict[str, Any]:
        return {"apiVersion": "apps/v1" if kind != "Pod" else "v1", "kind": kind, "metadata": {"name": name}}
    return [Rendered(obj("Deployment", "nova-conductor"), "templates/deployment-conductor.yaml"),
            Rendered(obj("DaemonSet", "nova-compute-default"), "templates/daemonset-compute.yaml"),
            Rendered(obj("Deployment", "other"), "templates/deployment-other.yaml"),
            Rendered(obj("StatefulSet", "mariadb-server"), "templates/statefulset.yaml"),
            Rendered(obj("Pod", "nova-test"), "templates/pod-rally-test.yaml")]


class _Reader:
    """The live objects: other is not the release's."""

    def __init__(self, dyn: Any, namespace: str, dry_run: bool = False) -> None:
        pass

    def get(self, api_version: str, kind: str, name: str) -> Optional[Dict[str, Any]]:
        annotations = HELM if name != "other" else {}
        labels = {"app.kubernetes.io/managed-by": "Helm"} if annotations else {}
        return {"metadata": {"name": name, "annotations": annotations, "labels": labels}}


@pytest.fixture(autouse=True)
def reader(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(release_workloads, "Applier", _Reader)


def test_install_waits_for_the_releases_workloads_last() -> None:
    found = release_workloads.release_workloads(None, "openstack", "install", "nova", object(), _rendered())
    # a workload by its kind, whatever its template is called (mariadb's statefulset.yaml)
    assert [(r.kind, r.name, r.wave) for r in found] == [
        ("Deployment", "nova-conductor", selection.LAST_WAVE), ("DaemonSet", "nova-compute-default", selection.LAST_WAVE),
        ("StatefulSet", "mariadb-server", selection.LAST_WAVE)]


def test_a_test_waits_for_them_first_so_it_reaches_a_whole_release() -> None:
    found = release_workloads.release_workloads(None, "openstack", "test", "nova", object(), _rendered())
    assert [(r.name, r.wave) for r in found] == [("nova-conductor", release_workloads.FIRST_WAVE),
                                                 ("nova-compute-default", release_workloads.FIRST_WAVE),
                                                 ("mariadb-server", release_workloads.FIRST_WAVE)]
    assert selection.CONFIG_WAVE < release_workloads.FIRST_WAVE < (0, 0)


def test_nothing_without_a_deployed_release_or_for_other_types() -> None:
    assert release_workloads.release_workloads(None, "openstack", "test", "nova", None, _rendered()) == []
    assert release_workloads.release_workloads(None, "openstack", "upgrade", "nova", object(), _rendered()) == []
