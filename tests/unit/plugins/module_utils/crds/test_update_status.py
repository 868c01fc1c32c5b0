"""plugins/module_utils/crds/update_status.py: the UpdateStatus's typed records
and accessor, on the singleton as the apiserver returns it
(fixtures/crds/updatestatus.yaml)."""

from __future__ import annotations

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.crds.update_status import (
    UpdateStatus, update_status_status,
)
from support.crd_records import cases, drift, schema, unknown_keys

SINGLETONS = cases("updatestatus")


def test_the_types_are_the_crds_schema() -> None:
    assert drift(UpdateStatus, schema("updatestatus")) == []


@pytest.mark.parametrize("case", sorted(SINGLETONS))
def test_every_key_of_the_singleton_is_typed(case: str) -> None:
    assert unknown_keys(SINGLETONS[case], UpdateStatus) == []


def test_drift_names_a_key_the_type_lacks() -> None:
    """`for`, the key spelt the functional way, is checked like the others."""
    node = schema("updatestatus")
    waiting = node["properties"]["status"]["properties"]["sites"]["items"]["properties"]["waiting"]["items"]
    waiting["properties"]["since"] = {"type": "string"}
    assert drift(UpdateStatus, node) == [".status.sites.waiting.since: in the CRD, not typed"]


def test_no_status_written_yet_reads_as_none() -> None:
    assert update_status_status(SINGLETONS["fresh"]) is None
    assert update_status_status(None) is None


def test_the_status_written_is_read() -> None:
    status = update_status_status(SINGLETONS["updating"])
    assert status is not None
    assert [s["name"] for s in status["services"]] == ["keystone", "placement"]
    assert status["sites"][0]["waiting"] == [{"service": "placement", "namespace": "openstack", "for": "keystone (Upgrading)"}]
    assert status["insights"][0]["impact"]["type"] == "Update Speed"
