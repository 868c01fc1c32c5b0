"""plugins/module_utils/crds/service_lifecycle.py: the ServiceLifecycle's typed
records and accessors, on records as the apiserver returns them
(fixtures/crds/servicelifecycle.yaml)."""

from __future__ import annotations

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.crds.service_lifecycle import (
    ServiceLifecycle, lifecycle_flow, lifecycle_spec, lifecycle_status,
)
from support.crd_records import cases, drift, schema, unknown_keys

RECORDS = cases("servicelifecycle")


def test_the_types_are_the_crds_schema() -> None:
    assert drift(ServiceLifecycle, schema("servicelifecycle")) == []


@pytest.mark.parametrize("case", sorted(RECORDS))
def test_every_key_of_a_record_is_typed(case: str) -> None:
    assert unknown_keys(RECORDS[case], ServiceLifecycle) == []


def test_drift_names_a_required_key_the_type_misses() -> None:
    node = schema("servicelifecycle")
    node["properties"]["status"]["properties"]["flow"]["required"] = ["name"]
    assert drift(ServiceLifecycle, node) == [".status.flow: the CRD requires ['name'], the type []"]


def test_a_fresh_record_has_no_status_and_no_flow() -> None:
    fresh = RECORDS["fresh"]
    assert lifecycle_status(fresh) == {}
    assert lifecycle_flow(fresh) == {}
    assert lifecycle_flow(fresh).get("state") is None
    assert lifecycle_spec(fresh)["dependsOn"] == ["keystone>=2025.1"]


def test_no_record_reads_as_empty() -> None:
    assert (lifecycle_spec(None), lifecycle_status(None), lifecycle_flow(None)) == ({}, {}, {})
    assert lifecycle_flow({"metadata": {}, "spec": {"service": "a", "release": "a"}, "status": {"state": "Removed"}}) == {}


def test_a_record_reads_its_flow_and_history() -> None:
    record = RECORDS["updated"]
    flow = lifecycle_flow(record)
    assert (flow["name"], flow["state"], flow["fromRevision"]) == ("update", "Succeeded", 1)
    assert flow["skipped"] == [{"phase": "trafficrollout", "reason": "the release renders no Service", "after": 2}]
    assert flow is record["status"]["flow"]
    status = lifecycle_status(record)
    assert (status["state"], status["currentVersion"], status["previousVersion"]) == ("Operational", "2025.2", "2025.1")
    assert [e["type"] for e in status["history"]] == ["install", "trafficdrain", "upgrade", "test"]
