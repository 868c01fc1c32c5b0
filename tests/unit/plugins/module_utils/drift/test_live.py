"""plugins/module_utils/drift/live.py: whether a release's objects in the
cluster are what its manifest sets, against a fake dynamic client that lists
each kind and answers server-side dry runs (no cluster)."""

from __future__ import annotations

import copy
from typing import Any, Dict, List, Optional, Sequence

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.drift import live
from ansible_collections.lcm.openstack.plugins.module_utils.drift.fields import parse_rules
from ansible_collections.lcm.openstack.plugins.module_utils.drift.model import ObjectDrift
from ansible_collections.lcm.openstack.plugins.module_utils.kube.paging import PAGE
from support.fake_api import status_error
from support.fake_cluster import FakeCluster, FakeKind

NS = "openstack"
KEY = (NS, "svc")


def deployment(replicas: int = 2, cpu: Any = "100m", image: str = "svc:1", **meta: Any) -> Dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "svc-api", "labels": {"app": "svc"}, **meta},
            "spec": {"replicas": replicas, "template": {"spec": {"containers": [
                {"name": "api", "image": image, "resources": {"requests": {"cpu": cpu}}}]}}}}


def config_map(debug: str = "false") -> Dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "svc-etc"}, "data": {"debug": debug}}


def secret(password: str = "s3cr3t") -> Dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "svc-db"}, "stringData": {"password": password}}


def cluster_role(verbs: List[str]) -> Dict[str, Any]:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "svc-reader"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": verbs}]}


def manifest(*objects: Dict[str, Any]) -> str:
    return "".join(f"---\n# Source: svc/templates/{o['kind'].lower()}.yaml\n{yaml.safe_dump(o)}" for o in objects)


def in_cluster(obj: Dict[str, Any], namespace: Optional[str] = NS, **status: Any) -> Dict[str, Any]:
    """The object as the apiserver holds it: its namespace, the server's metadata, defaults and a status."""
    out = copy.deepcopy(obj)
    meta = out["metadata"]
    if namespace:
        meta["namespace"] = namespace
    meta.update(uid=f"uid-{meta['name']}", resourceVersion="100", managedFields=[{"manager": "helm"}])
    if out["kind"] == "Secret":
        out.pop("stringData")
        out["data"], out["type"] = {"password": "czNjcjN0"}, "Opaque"
    if out["kind"] == "Deployment":
        out["spec"]["revisionHistoryLimit"] = 10
        out["status"] = {"readyReplicas": out["spec"]["replicas"], **status}
    return out


def kinds(deploy: List[Dict[str, Any]], apply: Any = None, **extra: Any) -> FakeCluster:
    return FakeCluster(FakeKind("apps/v1", "Deployment", deploy, apply=apply, **extra),
                       FakeKind("v1", "ConfigMap", [in_cluster(config_map())]),
                       FakeKind("v1", "Secret", [in_cluster(secret())]),
                       FakeKind("rbac.authorization.k8s.io/v1", "ClusterRole",
                                [in_cluster(cluster_role(["get"]), namespace=None)], namespaced=False))


def drifted(dyn: FakeCluster, text: str, rules: Sequence[str] = ()) -> Any:
    return live.drifted(dyn, {KEY: live.Release(NS, text, parse_rules(list(rules)))})


def applies(dyn: FakeCluster) -> List[Dict[str, Any]]:
    return [a for k in dyn.kinds.values() for a in k.applies]


EVERY = manifest(deployment(), config_map(), secret(), cluster_role(["get"]))


def test_objects_equal_as_written_need_no_dry_run() -> None:
    dyn = kinds([in_cluster(deployment())])
    assert drifted(dyn, EVERY) == ({KEY: []}, {})
    assert applies(dyn) == []


def test_one_list_a_kind_and_helms_records_never_listed() -> None:
    dyn = kinds([in_cluster(deployment())])
    drifted(dyn, EVERY)
    lists = {kind: k.lists for (_v, kind), k in dyn.kinds.items()}
    # Cluster-wide, in pages; Helm's own Secrets and ConfigMaps (owner=helm) left out by the selector.
    assert lists == {"Deployment": [{"namespace": None, "selector": None, "limit": PAGE}],
                     "ConfigMap": [{"namespace": None, "selector": "owner!=helm", "limit": PAGE}],
                     "Secret": [{"namespace": None, "selector": "owner!=helm", "limit": PAGE}],
                     "ClusterRole": [{"namespace": None, "selector": None, "limit": PAGE}]}


def test_a_difference_the_apiserver_finds_equal_is_not_drift() -> None:
    """cpu 0.1 in the manifest, 100m in the cluster: the local comparison cannot tell, the dry run can."""
    there = in_cluster(deployment(cpu="100m"))
    dyn = kinds([there], apply=lambda body: dict(copy.deepcopy(there),
                                                 metadata=dict(there["metadata"], resourceVersion="101")))
    assert drifted(dyn, manifest(deployment(cpu=0.1))) == ({KEY: []}, {})
    [request] = applies(dyn)
    assert request["dry_run"] == "All" and request["manager"] == live.DRY_RUN_MANAGER and request["force"] is True
    assert request["namespace"] == NS and request["body"]["metadata"]["namespace"] == NS
    assert request["body"]["spec"]["template"]["spec"]["containers"][0]["resources"] == {"requests": {"cpu": 0.1}}


def _applied_over(there: Dict[str, Any]) -> Any:
    """The apiserver's answer to a dry run: the manifest's fields over the live object, a new resourceVersion."""
    def answer(body: Dict[str, Any]) -> Dict[str, Any]:
        out = copy.deepcopy(there)
        out["spec"]["replicas"] = body["spec"]["replicas"]
        out["spec"]["template"] = body["spec"]["template"]
        out["metadata"].update(resourceVersion="101", managedFields=[{"manager": "helm"}, {"manager": "drift"}])
        return out
    return answer


def test_a_difference_the_apiserver_confirms_is_drift_with_each_field_as_it_is_and_as_set() -> None:
    there = in_cluster(deployment(replicas=5))
    dyn = kinds([there], apply=_applied_over(there))
    found, skipped = drifted(dyn, EVERY)
    assert skipped == {} and found == {KEY: [ObjectDrift("Deployment", "svc-api", NS, ["spec.replicas"])]}
    [drift] = found[KEY]
    assert drift.was == {"spec.replicas": 5} and drift.wanted == {"spec.replicas": 2}
    assert len(applies(dyn)) == 1  # the other objects are equal as written


def test_a_missing_object_is_drift_without_a_dry_run() -> None:
    dyn = kinds([])
    found, _skipped = drifted(dyn, EVERY)
    assert found == {KEY: [ObjectDrift("Deployment", "svc-api", NS, missing=True)]}
    assert found[KEY][0].text() == "Deployment/svc-api is missing"
    assert applies(dyn) == []


def test_an_object_of_another_namespace_is_not_the_releases() -> None:
    dyn = kinds([in_cluster(deployment(), namespace="elsewhere")])
    found, _skipped = drifted(dyn, manifest(deployment()))
    assert found == {KEY: [ObjectDrift("Deployment", "svc-api", NS, missing=True)]}


def test_an_ignored_field_is_neither_confirmed_nor_reported() -> None:
    dyn = kinds([in_cluster(deployment(replicas=5))])  # no dry run expected: the fake refuses one
    assert drifted(dyn, EVERY, ["Deployment/svc-api:spec.replicas"]) == ({KEY: []}, {})
    assert applies(dyn) == []


def test_an_ignored_field_the_dry_run_moves_is_not_reported_with_the_rest() -> None:
    there = in_cluster(deployment(replicas=5, image="svc:0"))
    dyn = kinds([there], apply=_applied_over(there))
    found, _skipped = drifted(dyn, EVERY, ["spec.replicas"])
    assert [o.fields for o in found[KEY]] == [["spec.template.spec.containers[0].image"]]


def test_a_rule_for_another_object_does_not_hide_this_ones_drift() -> None:
    there = in_cluster(deployment(replicas=5))
    dyn = kinds([there], apply=_applied_over(there))
    found, _skipped = drifted(dyn, EVERY, ["Deployment/svc-worker:spec.replicas", "StatefulSet:spec.replicas"])
    assert [o.fields for o in found[KEY]] == [["spec.replicas"]]


def test_a_refused_dry_run_reports_the_local_fields_unconfirmed() -> None:
    denied = status_error(403, message='deployments.apps "svc-api" is forbidden: User "runner" cannot patch '
                                       'resource "deployments" in API group "apps" in the namespace "openstack"')
    dyn = kinds([in_cluster(deployment(replicas=5))], apply=denied)
    found, skipped = drifted(dyn, EVERY)
    [drift] = found[KEY]
    assert skipped == {} and (drift.kind, drift.name, drift.missing) == ("Deployment", "svc-api", False)
    assert drift.fields[0] == "spec.replicas"
    assert drift.fields[1].startswith("(unconfirmed: the dry run was refused, ")
    assert 'cannot patch resource "deployments"' in drift.fields[1]
    assert len(drift.fields) == 2


def test_a_secret_edited_in_the_cluster_is_confirmed_against_its_data() -> None:
    there = in_cluster(secret())
    there["data"]["password"] = "b3RoZXI="
    dyn = FakeCluster(FakeKind("v1", "Secret", [there], apply=lambda body: dict(copy.deepcopy(there), data=body["data"])))
    found, _skipped = drifted(dyn, manifest(secret()))
    [drift] = found[KEY]
    assert drift.fields == ["data.password"]
    # The body applied is the stored form: base64 data, no stringData.
    [request] = applies(dyn)
    assert request["body"]["data"] == {"password": "czNjcjN0"} and "stringData" not in request["body"]


def test_a_cluster_scoped_object_is_found_and_applied_without_a_namespace() -> None:
    there = in_cluster(cluster_role(["get", "list", "delete"]), namespace=None)
    dyn = FakeCluster(FakeKind("rbac.authorization.k8s.io/v1", "ClusterRole", [there], namespaced=False,
                               apply=lambda body: dict(copy.deepcopy(there), rules=body["rules"])))
    found, _skipped = drifted(dyn, manifest(cluster_role(["get", "list"])))
    assert found == {KEY: [ObjectDrift("ClusterRole", "svc-reader", "", ["rules[0].verbs"])]}
    [request] = applies(dyn)
    assert request["namespace"] is None and "namespace" not in request["body"]["metadata"]


def test_a_kind_the_cluster_no_longer_serves_is_left_out() -> None:
    gone = {"apiVersion": "example.org/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"a": 1}}
    dyn = kinds([in_cluster(deployment())])
    assert drifted(dyn, manifest(deployment(), gone)) == ({KEY: []}, {})
    assert ("example.org/v1", "Widget") in dyn.asked


def test_many_releases_share_one_list_a_kind() -> None:
    theirs = in_cluster(deployment(replicas=5), namespace="other")
    there = in_cluster(deployment())
    dyn = FakeCluster(FakeKind("apps/v1", "Deployment", [there, theirs], apply=_applied_over(theirs)))
    text = manifest(deployment())
    found, skipped = live.drifted(dyn, {KEY: live.Release(NS, text), ("other", "svc"): live.Release("other", text)})
    assert skipped == {}
    assert found == {KEY: [], ("other", "svc"): [ObjectDrift("Deployment", "svc-api", "other", ["spec.replicas"])]}
    assert len(dyn.kinds["apps/v1", "Deployment"].lists) == 1


def _denied(namespace: Optional[str]) -> Exception:
    where = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    return status_error(403, message=f'deployments.apps is forbidden: User "runner" cannot list resource '
                                     f'"deployments" in API group "apps" {where}')


def test_a_namespace_whose_kind_may_not_be_listed_is_said_unread_the_others_compared() -> None:
    theirs = in_cluster(deployment(replicas=5), namespace="other")
    dyn = FakeCluster(FakeKind("apps/v1", "Deployment", [in_cluster(deployment()), theirs],
                               refused={None: _denied(None), "other": _denied("other")}))
    text = manifest(deployment())
    found, skipped = live.drifted(dyn, {KEY: live.Release(NS, text), ("other", "svc"): live.Release("other", text)})
    assert skipped == {("other", "svc"): "Deployment may not be listed in namespace other"}
    # Not read is not missing: nothing is reported of the release not compared.
    assert found == {KEY: [], ("other", "svc"): []}
    assert [r["namespace"] for r in dyn.kinds["apps/v1", "Deployment"].lists] == [None, NS, "other"]


def test_a_manifest_object_without_a_name_or_kind_is_not_compared() -> None:
    release = live.Release(NS, manifest(deployment(), {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}))
    assert [o["kind"] for o in release.objects] == ["Deployment"]


@pytest.mark.parametrize("replicas", [2, 3])
def test_the_local_comparison_alone_decides_when_a_dry_run_is_asked(replicas: int) -> None:
    there = in_cluster(deployment(replicas=replicas))
    dyn = kinds([there], apply=_applied_over(there))
    drifted(dyn, manifest(deployment(replicas=2)))
    assert len(applies(dyn)) == (0 if replicas == 2 else 1)


def test_a_label_edited_is_reported_with_its_values_under_its_dotted_key() -> None:
    desired = deployment()
    desired["metadata"]["labels"]["app.kubernetes.io/version"] = "2026.1"
    there = in_cluster(desired)
    there["metadata"]["labels"]["app.kubernetes.io/version"] = "hand-edited"

    def dry_run(body: Dict[str, Any]) -> Dict[str, Any]:
        return dict(copy.deepcopy(there), metadata=dict(there["metadata"], labels=body["metadata"]["labels"]))
    dyn = kinds([there], apply=dry_run)
    found, _skipped = drifted(dyn, manifest(desired))
    [drift] = found[KEY]
    assert drift.fields == ["metadata.labels.app.kubernetes.io/version"]
    assert drift.was == {"metadata.labels.app.kubernetes.io/version": "hand-edited"}
    assert drift.wanted == {"metadata.labels.app.kubernetes.io/version": "2026.1"}
