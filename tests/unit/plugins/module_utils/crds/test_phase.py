"""plugins/module_utils/crds/phase.py: the Phase's typed records and accessors,
on Phases as the apiserver returns them (fixtures/crds/phase.yaml)."""

from __future__ import annotations

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.crds.phase import Phase, phase_spec, phase_status
from support.crd_records import cases, drift, schema, unknown_keys

PHASES = cases("phase")


def test_the_types_are_the_crds_schema() -> None:
    assert drift(Phase, schema("phase")) == []


@pytest.mark.parametrize("case", sorted(PHASES))
def test_every_key_of_a_phase_is_typed(case: str) -> None:
    assert unknown_keys(PHASES[case], Phase) == []


def test_drift_names_the_key_the_crd_lacks() -> None:
    """The check above can fail: a key the CRD has not, or lost, is named."""
    node = schema("phase")
    del node["properties"]["status"]["properties"]["objects"]["items"]["properties"]["owned"]
    assert drift(Phase, node) == [".status.objects.owned: typed, not in the CRD"]
    assert unknown_keys(dict(PHASES["succeeded"], extra=1), Phase) == [".extra"]


def test_a_fresh_phase_reads_as_an_empty_status() -> None:
    fresh = PHASES["fresh"]
    assert phase_status(fresh) == {}
    assert phase_status(fresh).get("state", "Pending") == "Pending"
    assert phase_spec(fresh)["type"] == "install"


def test_no_phase_reads_as_empty() -> None:
    assert phase_status(None) == {}
    assert phase_spec(None) == {}
    assert phase_status({"metadata": {"name": "x"}, "spec": {"type": "test", "service": "s", "release": "s"},
                         "status": None}) == {}


def test_a_phase_that_ran_reads_its_status() -> None:
    status = phase_status(PHASES["succeeded"])
    assert status["state"] == "Succeeded"
    assert status["backupSource"]["databases"] == ["keystone"]
    assert [o["name"] for o in status["objects"]] == ["keystone-db-backup", "keystone-db-sync"]
    assert phase_spec(PHASES["succeeded"])["upgrade"]["backupDatabase"] is True
    failed = phase_status(PHASES["failed"])
    assert (failed["state"], failed["failedObject"]) == ("Failed", "Job/keystone-test")
    assert [j["action"] for j in failed["stoppedJobs"]] == ["Suspended", "NotStopped"]


def test_the_status_read_is_the_phases_own() -> None:
    """Not a copy: what reads it sees the body as it is."""
    phase = PHASES["succeeded"]
    assert phase_status(phase) is phase["status"]
