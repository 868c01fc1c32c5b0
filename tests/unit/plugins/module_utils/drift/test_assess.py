"""plugins/module_utils/drift/assess.py: every release of a site compared at
once, with what is asked and with its objects (a fake dynamic client holding
Helm's records and the releases' objects)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Dict

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError
from ansible_collections.lcm.openstack.plugins.module_utils.drift.assess import Asked, asked_of, assess, policy_of
from ansible_collections.lcm.openstack.plugins.module_utils.drift.model import (
    CORRECT, IGNORE, REPORT, ObjectDrift, ReleaseDrift,
)
from ansible_collections.lcm.openstack.plugins.module_utils.helm.storage import encode
from support.fake_api import status_error
from support.fake_cluster import FakeCluster, FakeKind

NS = "openstack"
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "keystone-api"},
              "spec": {"replicas": 2}}
CONFIG = {"conf": {"debug": False}, "pod": {"replicas": {"api": 2}},
          "lifecycle": {"version": "2025.1"}, "manifests": {"job_db_sync": False}}


def helm_record(name: str = "keystone", revision: int = 3, config: Any = None) -> Dict[str, Any]:
    record = {"name": name, "version": revision, "info": {"status": "deployed"},
              "chart": {"metadata": {"name": name, "version": "2025.1.0"}},
              "config": CONFIG if config is None else config,
              "manifest": "---\n# Source: keystone/templates/deployment.yaml\n" + yaml.safe_dump(DEPLOYMENT)}
    return {"metadata": {"name": f"sh.helm.release.v1.{name}.v{revision}", "namespace": NS,
                         "labels": {"owner": "helm", "name": name, "status": "deployed", "version": str(revision)}},
            "data": {"release": encode(record)}}


def live_deployment(replicas: int) -> Dict[str, Any]:
    out = copy.deepcopy(DEPLOYMENT)
    out["metadata"]["namespace"] = NS
    out["spec"]["replicas"] = replicas
    return out


def cluster(replicas: int = 2, secrets: Any = None) -> FakeCluster:
    def dry_run(body: Dict[str, Any]) -> Dict[str, Any]:
        return dict(live_deployment(replicas), spec=body["spec"])
    return FakeCluster(FakeKind("v1", "Secret", [helm_record()] if secrets is None else secrets),
                       FakeKind("apps/v1", "Deployment", [live_deployment(replicas)], apply=dry_run))


def ask(**given: Any) -> Asked:
    return Asked(NS, "keystone", **given)


@pytest.mark.parametrize("value, policy", [(None, REPORT), ("", REPORT), ("report", REPORT),
                                           ("correct", CORRECT), ("ignore", IGNORE)])
def test_policy_of(value: Any, policy: str) -> None:
    assert policy_of(value, "keystone: ") == policy


@pytest.mark.parametrize("value", ["fix", "Correct", 1, ["correct"]])
def test_policy_of_refuses_another_naming_the_input(value: Any) -> None:
    with pytest.raises(InputError) as raised:
        policy_of(value, "keystone: ")
    assert str(raised.value) == f"keystone: drift must be one of correct, report, ignore, not {value!r}"


def test_asked_of_a_site_entry() -> None:
    asked = asked_of({"chart": "openstack-helm/keystone", "chart_version": "2025.1.0", "values": {"a": 1},
                      "values_files": "site.yaml", "drift": "correct",
                      "drift_ignore": ["Deployment:spec.replicas"]}, NS, "keystone", "keystone")
    assert asked == Asked(NS, "keystone", "openstack-helm/keystone", "2025.1.0", {"a": 1}, ["site.yaml"], CORRECT,
                          [("Deployment", "", "spec.replicas")])


def test_asked_of_nothing_given_reports_and_ignores_nothing() -> None:
    assert asked_of({}, NS, "keystone", "keystone") == Asked(NS, "keystone", policy=REPORT, values_files=[])


@pytest.mark.parametrize("raw, message", [
    ({"drift": "always"}, "glance: drift must be one of correct, report, ignore, not 'always'"),
    ({"drift_ignore": ["spec.replicas", "a:b:c"]}, "glance: drift_ignore[1] must be a field path"),
])
def test_asked_of_refuses_naming_the_service_and_input(raw: Dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as raised:
        asked_of(raw, NS, "glance", "glance")
    assert str(raised.value).startswith(message)


def test_a_release_as_asked_and_as_deployed_has_no_drift() -> None:
    dyn = cluster()
    found = assess(dyn, {"keystone": ask(values={"conf": {"debug": False}, "pod": {"replicas": {"api": 2}}})})
    assert found["keystone"].as_dict() == ReleaseDrift().as_dict()
    assert dyn.kinds["apps/v1", "Deployment"].applies == []


def test_values_asked_otherwise_are_named_with_both_values_kept_for_a_diff(tmp_path: Path) -> None:
    site = tmp_path / "site.yaml"
    site.write_text(yaml.safe_dump({"conf": {"debug": True}}))
    found = assess(cluster(), {"keystone": ask(values={"pod": {"replicas": {"api": 3}}}, values_files=[str(site)])})
    drift = found["keystone"]
    assert drift.values == ["conf.debug", "pod.replicas.api"] and drift.asked and not drift.live
    assert drift.values_was == {"conf.debug": False, "pod.replicas.api": 2}
    assert drift.values_wanted == {"conf.debug": True, "pod.replicas.api": 3}


def test_the_chart_is_compared_only_when_one_is_asked() -> None:
    values = {"conf": {"debug": False}, "pod": {"replicas": {"api": 2}}}
    found = assess(cluster(), {"same": ask(values=values, chart="openstack-helm/keystone", chart_version="2025.1.0"),
                               "newer": ask(values=values, chart="openstack-helm/keystone", chart_version="2025.2.0"),
                               "none": ask(values=values)})
    assert (found["same"].chart, found["none"].chart) == ([], [])
    assert found["newer"].chart == ["keystone-2025.1.0 -> keystone-2025.2.0"]


def test_a_live_drift_is_read_for_report_and_correct() -> None:
    values = {"conf": {"debug": False}, "pod": {"replicas": {"api": 2}}}
    found = assess(cluster(replicas=5), {"r": ask(values=values), "c": ask(values=values, policy=CORRECT)})
    expected = [ObjectDrift("Deployment", "keystone-api", NS, ["spec.replicas"])]
    assert (found["r"].objects, found["r"].policy) == (expected, REPORT)
    assert (found["c"].objects, found["c"].policy) == (expected, CORRECT)


def test_the_ignore_policy_reads_no_live_object() -> None:
    dyn = cluster(replicas=5)
    found = assess(dyn, {"keystone": ask(values={"conf": {"debug": True}}, policy=IGNORE)})
    assert found["keystone"].objects == [] and found["keystone"].policy == IGNORE
    # Still compared with what is asked: a change asked for is not drift.
    assert found["keystone"].values == ["conf.debug", "pod.replicas.api (removed)"]
    assert ("apps/v1", "Deployment") not in dyn.asked
    assert [r["selector"] for r in dyn.kinds["v1", "Secret"].lists] == ["owner=helm,status=deployed"]


def test_no_deployed_revision_is_unread_and_reads_nothing_else() -> None:
    dyn = cluster(secrets=[])
    found = assess(dyn, {"keystone": ask(values={"a": 1}, policy=CORRECT)})
    assert found["keystone"].as_dict() == ReleaseDrift(policy=CORRECT, unread="no deployed revision").as_dict()
    assert not found["keystone"].asked and not found["keystone"].live
    assert dyn.asked == [("v1", "Secret")]


def test_only_the_deployed_revision_of_each_release_is_compared() -> None:
    """glance has nothing deployed, keystone has: each gets its own answer, with one list of records."""
    dyn = cluster()
    found = assess(dyn, {"k": ask(values={"conf": {"debug": False}, "pod": {"replicas": {"api": 2}}}),
                         "g": Asked(NS, "glance")})
    assert found["g"].unread == "no deployed revision" and found["k"].unread == ""
    assert len([r for r in dyn.kinds["v1", "Secret"].lists if r["selector"] == "owner=helm,status=deployed"]) == 1


def test_a_release_whose_kind_may_not_be_listed_is_said_unread() -> None:
    denied = {where: status_error(403, message=f'deployments.apps is forbidden: User "runner" cannot list resource '
                                               f'"deployments" in API group "apps" {text}')
              for where, text in ((None, "at the cluster scope"), (NS, f'in the namespace "{NS}"'))}
    dyn = FakeCluster(FakeKind("v1", "Secret", [helm_record()]),
                      FakeKind("apps/v1", "Deployment", [live_deployment(5)], refused=denied))
    found = assess(dyn, {"keystone": ask(values={"conf": {"debug": False}, "pod": {"replicas": {"api": 2}}})})
    assert found["keystone"].unread == f"Deployment may not be listed in namespace {NS}"
    assert found["keystone"].objects == []


def test_every_service_asked_is_answered_by_its_key() -> None:
    asks = {("openstack", "keystone"): ask(), ("openstack", "glance"): Asked(NS, "glance")}
    assert sorted(assess(cluster(), asks)) == sorted(asks)
