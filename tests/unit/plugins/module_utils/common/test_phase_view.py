"""plugins/module_utils/common/phase_view.py: a Phase as the modules return it,
snake_case, with what only a failed or a backed-up Phase has."""

from __future__ import annotations

from typing import Any, Dict

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.common.phase_view import describe_phase
from support.paths import UNIT_FIXTURES

PHASES: Dict[str, Any] = yaml.safe_load((UNIT_FIXTURES / "phase_view" / "phases.yaml").read_text())
FAILURE_KEYS = {"failed_object", "reason", "log_tail", "stopped_jobs"}


def test_a_succeeded_phase_has_its_duration_objects_and_backup() -> None:
    out = describe_phase(PHASES["succeeded"])
    assert (out["name"], out["type"], out["state"], out["target_version"]) == (
        "keystone-upgrade-4e5f6a7b", "upgrade", "Succeeded", "2025.2")
    assert out["duration_seconds"] == 95 and out["spec_hash"] == "4e5f6a7b"  # from the label
    assert out["objects"] == PHASES["succeeded"]["status"]["objects"]
    assert out["backup_ref"] == "keystone-2025-2-0a1b2c3d"
    assert out["backup_source"] == {"cronJob": "mariadb-backup", "namespace": "openstack"}
    assert not FAILURE_KEYS & set(out)


def test_a_failed_phase_says_what_failed_and_which_jobs_it_stopped() -> None:
    out = describe_phase(PHASES["failed"])
    assert out["failed_object"] == "Job/keystone-db-sync" and out["reason"] == "BackoffLimitExceeded"
    assert out["log_tail"].startswith("ERROR: Access denied")
    assert out["stopped_jobs"] == [{"name": "keystone-bootstrap", "was_active": 1}]
    assert out["spec_hash"] == "0a1b2c3d" and out["release_revision"] == 1 and out["duration_seconds"] == 20
    assert "backup_ref" not in out


def test_a_phase_nobody_started_is_pending_with_no_times() -> None:
    out = describe_phase(PHASES["pending"])
    assert out["state"] == "Pending" and out["message"] == "" and out["objects"] == []
    assert out["started_at"] is None and out["duration_seconds"] is None and out["spec_hash"] is None


@pytest.mark.parametrize("name", sorted(PHASES))
def test_the_phase_itself_is_left_as_it_was(name: str) -> None:
    before = yaml.safe_dump(PHASES[name])
    describe_phase(PHASES[name])["objects"].append({"kind": "Pod"})
    assert yaml.safe_dump(PHASES[name]) == before
