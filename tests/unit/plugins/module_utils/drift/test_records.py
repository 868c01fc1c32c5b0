"""plugins/module_utils/drift/records.py: the deployed revision of many
releases, decoded from Helm's storage records (built with helm/storage.py's
encode), one list for the namespaces wanted."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError
from ansible_collections.lcm.openstack.plugins.module_utils.drift import records
from ansible_collections.lcm.openstack.plugins.module_utils.helm.storage import CONFIGMAP, SECRET, encode
from support.fake_api import status_error
from support.fake_cluster import FakeCluster, FakeKind

CHART = {"metadata": {"name": "keystone", "version": "2025.1.0"}, "templates": [], "values": {"a": 1}}


def release(name: str, revision: int, status: str = "deployed", password: str = "s3cr3t") -> Dict[str, Any]:
    return {"name": name, "version": revision, "namespace": "openstack",
            "info": {"status": status, "description": "Upgrade complete"},
            "chart": CHART, "config": {"conf": {"password": password}, "replicas": revision},
            "manifest": f"---\n# revision {revision}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n"}


def stored(record: Dict[str, Any], namespace: str = "openstack", of: str = SECRET) -> Dict[str, Any]:
    """Helm's record of a revision, labelled as Helm labels it."""
    status = record["info"]["status"]
    return {"metadata": {"name": f"sh.helm.release.v1.{record['name']}.v{record['version']}", "namespace": namespace,
                         "labels": {"owner": "helm", "name": record["name"], "status": status,
                                    "version": str(record["version"])}},
            "type": "helm.sh/release.v1", "data": {"release": encode(record, of)}}


def cluster(items: List[Dict[str, Any]], of: str = SECRET, **extra: Any) -> FakeCluster:
    return FakeCluster(FakeKind("v1", of, items, **extra))


def test_the_deployed_revision_of_each_release_decoded() -> None:
    dyn = cluster([stored(release("keystone", 3)), stored(release("glance", 1)),
                   stored(release("keystone", 4, status="failed")), stored(release("keystone", 2, status="superseded"))])
    found = records.deployed(dyn, ["openstack"])
    assert sorted(found) == [("openstack", "glance"), ("openstack", "keystone")]
    keystone = found["openstack", "keystone"]
    assert keystone == {"namespace": "openstack", "name": "keystone", "revision": 3, "chart": CHART,
                        "config": {"conf": {"password": "s3cr3t"}, "replicas": 3},
                        "manifest": release("keystone", 3)["manifest"]}
    # One list, of the deployed records alone (the selector), across the namespaces wanted.
    assert dyn.kinds["v1", SECRET].lists == [{"namespace": None, "selector": records.SELECTOR, "limit": 500}]


@pytest.mark.parametrize("order", [(5, 7), (7, 5)])
def test_the_highest_deployed_revision_wins_in_any_order(order: Any) -> None:
    dyn = cluster([stored(release("keystone", n)) for n in order])
    found = records.deployed(dyn, ["openstack"])
    assert found["openstack", "keystone"]["revision"] == 7
    assert found["openstack", "keystone"]["config"]["replicas"] == 7


def test_the_revision_is_compared_as_a_number() -> None:
    dyn = cluster([stored(release("keystone", 10)), stored(release("keystone", 9))])
    assert records.deployed(dyn, ["openstack"])["openstack", "keystone"]["revision"] == 10


def test_releases_of_the_same_name_in_two_namespaces_are_two() -> None:
    dyn = cluster([stored(release("keystone", 2), "openstack"), stored(release("keystone", 5), "other"),
                   stored(release("keystone", 9), "not-asked")])
    found = records.deployed(dyn, ["openstack", "other"])
    assert {k: v["revision"] for k, v in found.items()} == {("openstack", "keystone"): 2, ("other", "keystone"): 5}


def test_the_raw_record_is_not_kept() -> None:
    found = records.deployed(cluster([stored(release("keystone", 2))]), ["openstack"])
    assert set(found["openstack", "keystone"]) == {"namespace", "name", "revision", "chart", "config", "manifest"}
    assert "info" not in repr(found) and "helm.sh/release.v1" not in repr(found)


def test_records_kept_in_configmaps() -> None:
    dyn = cluster([stored(release("keystone", 2), of=CONFIGMAP)], of=CONFIGMAP)
    found = records.deployed(dyn, ["openstack"], of=CONFIGMAP)
    assert found["openstack", "keystone"]["revision"] == 2
    assert found["openstack", "keystone"]["config"]["conf"] == {"password": "s3cr3t"}


def test_no_namespace_is_no_request() -> None:
    dyn = FakeCluster()
    assert records.deployed(dyn, []) == {} and dyn.asked == []


def test_a_namespace_whose_records_may_not_be_read_is_an_error() -> None:
    """A record not read would be a release with nothing deployed: the plan cannot go on without it."""
    def denied(where: str) -> Exception:
        return status_error(403, message=f'secrets is forbidden: User "runner" cannot list resource "secrets" '
                                         f'in API group "" {where}')
    dyn = cluster([stored(release("keystone", 2))],
                  refused={None: denied("at the cluster scope"), "openstack": denied('in the namespace "openstack"')})
    with pytest.raises(KubeError, match=r"^forbidden: .*may not list.*secrets.*openstack"):
        records.deployed(dyn, ["openstack"])
