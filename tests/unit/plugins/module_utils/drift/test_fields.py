"""plugins/module_utils/drift/fields.py: the fields of an object that differ,
and the fields a service ignores. set_by cases in fixtures/drift/set_by.yaml."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError
from ansible_collections.lcm.openstack.plugins.module_utils.drift.fields import (
    at, between, desired_form, ignored, parse_rules, set_by,
)
from support.paths import UNIT_FIXTURES

CASES = yaml.safe_load((UNIT_FIXTURES / "drift" / "set_by.yaml").read_text())


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_set_by(case: Dict[str, Any]) -> None:
    assert set_by(case["desired"], case["live"]) == case["paths"]


def test_desired_form_leaves_the_manifests_object_as_it_was() -> None:
    secret = {"kind": "Secret", "metadata": {"name": "db"}, "stringData": {"password": "s3cr3t"}}
    assert desired_form(secret) == {"kind": "Secret", "metadata": {"name": "db"}, "data": {"password": "czNjcjN0"}}
    assert secret == {"kind": "Secret", "metadata": {"name": "db"}, "stringData": {"password": "s3cr3t"}}


def test_desired_form_of_another_kind_is_as_written() -> None:
    config = {"kind": "ConfigMap", "metadata": {"name": "c"}, "stringData": {"a": "b"}}
    assert desired_form(config) == config


def _deployment(replicas: int, **meta: Any) -> Dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "svc-api", "namespace": "openstack", "labels": {"app": "svc"}, **meta},
            "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "api", "image": "svc:1"}]}}},
            "status": {"readyReplicas": replicas}}


def test_between_equal_objects_is_nothing() -> None:
    assert between(_deployment(2), _deployment(2)) == []


def test_between_leaves_out_status_and_what_the_server_writes() -> None:
    before = _deployment(2, resourceVersion="7", generation=1, uid="u", managedFields=[{"manager": "helm"}],
                         creationTimestamp="t0")
    managed = [{"manager": "helm"}, {"manager": "drift"}]
    after = _deployment(2, resourceVersion="8", generation=2, uid="u", managedFields=managed)
    after["status"] = {"readyReplicas": 0}
    assert between(before, after) == []


def test_between_names_every_field_that_differs_sorted() -> None:
    before, after = _deployment(2), _deployment(3, annotations={"note": "a"})
    after["spec"]["template"]["spec"]["containers"][0]["image"] = "svc:2"
    assert between(before, after) == ["metadata.annotations", "spec.replicas",
                                      "spec.template.spec.containers[0].image"]


def test_between_a_list_of_another_length_is_the_whole_list() -> None:
    before, after = _deployment(2), _deployment(2)
    after["spec"]["template"]["spec"]["containers"].append({"name": "side"})
    assert between(before, after) == ["spec.template.spec.containers"]


def test_between_a_label_added_is_named_by_its_key() -> None:
    assert between(_deployment(2), _deployment(2, labels={"app": "svc", "tier": "api"})) == ["metadata.labels.tier"]


@pytest.mark.parametrize("given, rules", [
    (None, []),
    ([], []),
    (["spec.replicas"], [("", "", "spec.replicas")]),
    (["Deployment:spec.replicas"], [("Deployment", "", "spec.replicas")]),
    (["Deployment/keystone-api:metadata.annotations"], [("Deployment", "keystone-api", "metadata.annotations")]),
    ([" Deployment/keystone-api:spec.template.spec.containers[0].image "],
     [("Deployment", "keystone-api", "spec.template.spec.containers[0].image")]),
    (["spec.replicas", "Secret:data"], [("", "", "spec.replicas"), ("Secret", "", "data")]),
])
def test_parse_rules(given: Any, rules: List[Any]) -> None:
    assert parse_rules(given) == rules


@pytest.mark.parametrize("given, index", [
    (["spec.replicas", "a:b:c"], 1),
    ([""], 0),
    (["spec.replicas", "   "], 1),
    ([3], 0),
    ([{"path": "spec.replicas"}], 0),
    (["spec.replicas", "Deployment:"], 1),
    (["Deployment/svc-api:  "], 0),
])
def test_parse_rules_refuses_a_rule_naming_it(given: List[Any], index: int) -> None:
    with pytest.raises(InputError, match=rf"^drift_ignore\[{index}\] must be a field path, Kind:path or Kind/name:path"):
        parse_rules(given)


def test_parse_rules_names_where_the_rule_was_given() -> None:
    with pytest.raises(InputError, match=r"^keystone: drift_ignore\[0\] must be .* not 'a:b:c'$"):
        parse_rules(["a:b:c"], "keystone: drift_ignore")


ANY = parse_rules(["spec.template"])
KIND = parse_rules(["Deployment:spec.replicas"])
NAMED = parse_rules(["Deployment/svc-api:spec.template.spec.containers[0]"])
LIST = parse_rules(["StatefulSet:spec.volumeClaimTemplates"])


@pytest.mark.parametrize("kind, name, path, rules, expected", [
    ("Deployment", "svc-api", "spec.template", ANY, True),
    ("Deployment", "svc-api", "spec.template.spec.containers[0].image", ANY, True),
    ("StatefulSet", "db", "spec.template.metadata.annotations", ANY, True),
    ("Deployment", "svc-api", "spec.templates", ANY, False),  # a prefix of the name, not of the path
    ("Deployment", "svc-api", "spec", ANY, False),  # above the rule's field
    ("Deployment", "svc-api", "spec.replicas", KIND, True),
    ("StatefulSet", "svc-api", "spec.replicas", KIND, False),
    ("Deployment", "svc-api", "spec.replicasX", KIND, False),
    ("Deployment", "svc-api", "spec.template.spec.containers[0].image", NAMED, True),
    ("Deployment", "svc-api", "spec.template.spec.containers[0]", NAMED, True),
    ("Deployment", "svc-api", "spec.template.spec.containers[1].image", NAMED, False),
    ("Deployment", "svc-worker", "spec.template.spec.containers[0].image", NAMED, False),
    ("StatefulSet", "db", "spec.volumeClaimTemplates[0].spec.resources", LIST, True),
    ("Deployment", "svc-api", "spec.replicas", [], False),
    ("Deployment", "svc-api", "spec.replicas", ANY + KIND, True),
])
def test_ignored(kind: str, name: str, path: str, rules: Any, expected: bool) -> None:
    assert ignored(kind, name, path, rules) is expected


OBJ = {"spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "api", "image": "svc:1"}]}}},
       "metadata": {"labels": {"app": "svc"}}}


@pytest.mark.parametrize("path, expected", [
    ("spec.replicas", 2),
    ("spec.template.spec.containers[0].image", "svc:1"),
    ("spec.template.spec.containers[0]", {"name": "api", "image": "svc:1"}),
    ("spec.template.spec.containers[1].image", None),  # past the list's end
    ("spec.template.spec.containers.image", None),  # a list read as a mapping
    ("spec.replicas.deeper", None),  # under a scalar
    ("metadata.labels.app", "svc"),
    ("metadata.annotations", None),
    ("spec[0]", None),  # an index of a mapping
])
def test_at(path: str, expected: Any) -> None:
    assert at(OBJ, path) == expected


def test_at_a_key_holding_dots_as_between_names_it() -> None:
    """Labels and annotations are keyed by dotted names: a path between() gives reads back their value."""
    before = {"metadata": {"labels": {"app.kubernetes.io/version": "1", "app": "svc"}}}
    after = {"metadata": {"labels": {"app.kubernetes.io/version": "2", "app": "svc"}}}
    [path] = between(before, after)
    assert path == "metadata.labels.app.kubernetes.io/version"
    assert (at(before, path), at(after, path)) == ("1", "2")
    assert at(before, "metadata.labels.app") == "svc"
    assert at(before, "metadata.labels.app.kubernetes") is None
