"""plugins/module_utils/updatestatus/drift_read.py: the releases at rest, and
only those, are compared, their records read where Helm keeps them; a
failure or a kind that may not be listed leaves drift unread with a warning,
never a failed refresh. The keeper reads drift only when given the reader:
the phase engine's refresh does not."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError
from ansible_collections.lcm.openstack.plugins.module_utils.drift import live, records
from ansible_collections.lcm.openstack.plugins.module_utils.drift.model import ObjectDrift
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus import drift_read, keeper
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights import Snapshot
from support.update_status import snapshot

MANIFEST = "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}-api\n"


def _record(kind: str, release: str, namespace: str = "openstack") -> Dict[str, Any]:
    return {"apiVersion": "v1", "kind": kind, "metadata": {
        "name": f"sh.helm.release.v1.{release}.v2", "namespace": namespace,
        "labels": {"owner": "helm", "name": release, "status": "deployed", "version": "2"}}}


def _at_rest() -> Snapshot:
    """drift.yaml's services (keystone, nova, cinder, heat at rest; glance
    upgrading), their records in Secrets but heat's, in ConfigMaps."""
    snap = snapshot("drift")
    snap.drift = None
    snap.releases = [_record("Secret", r) for r in ("keystone", "nova", "cinder", "glance")] + [_record("ConfigMap", "heat")]
    return snap


class _Cluster:
    def __init__(self, monkeypatch: pytest.MonkeyPatch, found: Dict[Tuple[str, str], List[ObjectDrift]],
                 skipped: Optional[Dict[Tuple[str, str], str]] = None) -> None:
        self.deployed: List[Tuple[List[str], str]] = []
        self.compared: List[Tuple[str, str]] = []
        monkeypatch.setattr(records, "deployed", self._deployed)
        monkeypatch.setattr(live, "drifted", self._drifted)
        self.found, self.skipped = found, skipped or {}

    def _deployed(self, dyn: Any, namespaces: Any, of: str) -> Dict[Tuple[str, str], Dict[str, Any]]:
        self.deployed.append((sorted(namespaces), of))
        kept = {"Secret": ("keystone", "nova", "glance"), "ConfigMap": ("heat",)}[of]  # cinder: none deployed
        return {("openstack", r): {"manifest": MANIFEST.format(name=r), "revision": 2} for r in kept}

    def _drifted(self, dyn: Any, releases: Dict[Tuple[str, str], live.Release]) -> Any:
        self.compared = sorted(releases)
        assert all(rel.objects[0]["kind"] == "Deployment" for rel in releases.values())
        return {key: self.found.get(key, []) for key in releases}, dict(self.skipped)


def test_only_the_releases_at_rest_are_compared_where_helm_keeps_them(monkeypatch: pytest.MonkeyPatch) -> None:
    scaled = ObjectDrift("Deployment", "keystone-api", "openstack", fields=["spec.replicas"])
    cluster = _Cluster(monkeypatch, {("openstack", "keystone"): [scaled]})
    found, warnings = drift_read.read(object(), _at_rest())
    assert cluster.deployed == [(["openstack"], "ConfigMap"), (["openstack"], "Secret")]
    # glance's update runs: not compared; cinder has no deployed revision: compared, nothing drifted.
    assert cluster.compared == [("openstack", "heat"), ("openstack", "keystone"), ("openstack", "nova")]
    assert found == {("openstack", "cinder"): [], ("openstack", "heat"): [], ("openstack", "keystone"): [scaled],
                     ("openstack", "nova"): []}
    assert warnings == []


def test_an_unread_namespace_is_not_compared(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = _Cluster(monkeypatch, {})
    snap = _at_rest()
    snap.unread = {"openstack"}
    assert drift_read.read(object(), snap) == ({}, [])
    assert cluster.deployed == [] and cluster.compared == []


def test_a_release_with_a_kind_that_may_not_be_listed_is_left_unread(monkeypatch: pytest.MonkeyPatch) -> None:
    _Cluster(monkeypatch, {}, skipped={("openstack", "nova"): "Deployment may not be listed in namespace openstack"})
    found, warnings = drift_read.read(object(), _at_rest())
    assert ("openstack", "nova") not in found and ("openstack", "keystone") in found
    assert warnings == ["the drift of release nova in openstack was not read (Deployment may not be listed in "
                        "namespace openstack): its insights stay as they were"]


def test_a_failure_leaves_drift_unread_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(dyn: Any, namespaces: Any, of: str) -> Dict[str, Any]:
        raise KubeError("forbidden: the credentials in use may not list secrets in namespace openstack")
    monkeypatch.setattr(records, "deployed", refused)
    found, warnings = drift_read.read(object(), _at_rest())
    assert found is None
    assert warnings == ["drift was not read, its insights stay as they were: "
                        "forbidden: the credentials in use may not list secrets in namespace openstack"]


def test_the_keeper_reads_drift_only_with_a_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    read: List[Snapshot] = []

    def reader(dyn: Any, snap: Snapshot) -> Any:
        read.append(snap)
        return {("openstack", "keystone"): []}, ["drift was not read, its insights stay as they were: boom"]

    monkeypatch.setattr(keeper, "lcm_resource", lambda dyn, kind: None)
    monkeypatch.setattr(keeper, "across", lambda *args, **kwargs: [])
    with_reader = keeper.StatusKeeper(_Dyn(), drift=reader)
    snap = with_reader.snapshot(_at_rest().now)
    assert read == [snap] and snap.drift == {("openstack", "keystone"): []}
    assert with_reader.warning == "drift was not read, its insights stay as they were: boom"
    with_reader.snapshot(snap.now)
    assert with_reader.warning == "drift was not read, its insights stay as they were: boom"  # said once
    assert keeper.StatusKeeper(_Dyn()).snapshot(snap.now).drift is None

    made: List[Dict[str, Any]] = []

    class Recorded(keeper.StatusKeeper):
        def __init__(self, dyn: Any, *args: Any, **kwargs: Any) -> None:
            made.append(dict(kwargs))
            super().__init__(dyn, *args, **kwargs)

        def run(self, details: str = "none", now: Any = None) -> Dict[str, Any]:
            return {}

    monkeypatch.setattr(keeper, "StatusKeeper", Recorded)
    assert keeper.refresh(_Dyn()) == ""
    assert made == [{}]  # the phase engine's refresh: no reader, no drift read


class _Dyn:
    class resources:  # pylint: disable=invalid-name
        @staticmethod
        def get(api_version: str, kind: str) -> Any:
            return None
