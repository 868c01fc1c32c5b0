"""plugins/module_utils/site/decide.py with_drift: the decision once a
service's release is read, for a service its record leaves as it is."""

from __future__ import annotations

from typing import Optional

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.drift.model import (
    CORRECT, IGNORE, REPORT, ObjectDrift, ReleaseDrift,
)
from ansible_collections.lcm.openstack.plugins.module_utils.site.decide import Decision, with_drift

AT_REST = Decision("nothing", "Operational at 2025.1")
REPLICAS = ObjectDrift("Deployment", "keystone-api", "openstack", ["spec.replicas"])
GONE = ObjectDrift("Service", "keystone-api", "openstack", missing=True)


def test_a_release_not_read_or_as_asked_keeps_the_decision() -> None:
    assert with_drift(AT_REST, None, "2025.1") == AT_REST
    assert with_drift(AT_REST, ReleaseDrift(), "2025.1") == AT_REST
    assert with_drift(AT_REST, ReleaseDrift(policy=CORRECT), "2025.1") == AT_REST


def test_values_asked_otherwise_are_an_update_at_the_same_version() -> None:
    drift = ReleaseDrift(values=["conf.debug", "pod.replicas.api (added)"])
    assert with_drift(AT_REST, drift, "2025.1") == Decision(
        "update", "values conf.debug, pod.replicas.api (added) changed; the release stays at version 2025.1",
        kept=True)


def test_a_chart_changed_is_an_update_naming_the_chart_then_the_values() -> None:
    drift = ReleaseDrift(values=["conf.debug"], chart=["keystone-2025.1.0 templates/deployment-api.yaml"])
    assert with_drift(AT_REST, drift, "2025.1") == Decision(
        "update", "chart keystone-2025.1.0 templates/deployment-api.yaml and values conf.debug changed; "
                  "the release stays at version 2025.1", kept=True)


@pytest.mark.parametrize("policy", [CORRECT, REPORT, IGNORE])
def test_a_change_asked_for_is_an_update_whatever_the_policy(policy: str) -> None:
    drift = ReleaseDrift(values=["conf.debug"], objects=[REPLICAS], policy=policy)
    assert with_drift(AT_REST, drift, "2025.1").flow == "update"


def test_a_long_list_of_keys_is_counted_past_a_few() -> None:
    drift = ReleaseDrift(values=[f"conf.k{i}" for i in range(7)])
    assert with_drift(AT_REST, drift, "2025.1").reason == (
        "values conf.k0, conf.k1, conf.k2, conf.k3 (and 3 more) changed; the release stays at version 2025.1")


def test_live_drift_with_correct_is_a_reconcile() -> None:
    drift = ReleaseDrift(objects=[REPLICAS, GONE], policy=CORRECT)
    assert with_drift(AT_REST, drift, "2025.1") == Decision(
        "reconcile", "drift: Deployment/keystone-api spec.replicas; Service/keystone-api is missing; "
                     "drift: correct applies the release again at 2025.1", kept=True)


def test_live_drift_with_report_stays_nothing_naming_the_drift() -> None:
    drift = ReleaseDrift(objects=[REPLICAS], policy=REPORT)
    assert with_drift(AT_REST, drift, "2025.1") == Decision(
        "nothing", "Operational at 2025.1; drift: Deployment/keystone-api spec.replicas (reported; "
                   "drift: correct applies the release again)")


def test_many_objects_drifted_are_counted_past_a_few() -> None:
    objects = [ObjectDrift("ConfigMap", f"c{i}", "openstack", ["data.a"]) for i in range(6)]
    reason = with_drift(AT_REST, ReleaseDrift(objects=objects, policy=CORRECT), "2025.1").reason
    assert reason.startswith("drift: ConfigMap/c0 data.a; ConfigMap/c1 data.a; ConfigMap/c2 data.a; "
                             "ConfigMap/c3 data.a and 2 more object(s);")
    assert "ConfigMap/c4" not in reason


def test_a_release_not_compared_says_why() -> None:
    drift = ReleaseDrift(unread="Deployment may not be listed in namespace openstack", policy=CORRECT)
    assert with_drift(AT_REST, drift, "2025.1") == Decision(
        "nothing", "Operational at 2025.1; its release was not compared: "
                   "Deployment may not be listed in namespace openstack")


@pytest.mark.parametrize("decision", [
    Decision("update", "version 2025.1 -> 2026.1"),
    Decision("greenfield", "no ServiceLifecycle yet"),
    Decision("remove", "Operational at 2025.1"),
])
@pytest.mark.parametrize("drift", [
    ReleaseDrift(values=["conf.debug"]),
    ReleaseDrift(objects=[REPLICAS], policy=CORRECT),
    ReleaseDrift(objects=[REPLICAS]),
    ReleaseDrift(unread="no deployed revision"),
])
def test_a_service_the_record_already_moves_keeps_its_decision(decision: Decision,
                                                               drift: Optional[ReleaseDrift]) -> None:
    assert with_drift(decision, drift, "2026.1") == decision
