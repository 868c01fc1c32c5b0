"""plugins/module_utils/helm/release.py: the decisions of a release brought to
a state, on a helm that prints a canned history and logs its calls: nothing
to do says so and runs no changing command; check mode runs none either.
(The Lease around changing commands: test_lease.py; a release left pending
by a broken connection: test_interrupted.py; what counts as a change:
test_drift.py; on a real cluster: tests/integration/test_helm_release.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm, HelmError
from ansible_collections.lcm.openstack.plugins.module_utils.helm.release import ReleaseManager, ReleaseRequest
from support.fake_helm import fake_helm

DEPLOYED = [{"revision": 1, "status": "superseded", "chart": "keystone-0.1.0", "description": "Install complete"},
            {"revision": 2, "status": "deployed", "chart": "keystone-0.1.0", "description": "Upgrade complete"}]
ROLLED_BACK = DEPLOYED[:1] + [dict(DEPLOYED[1], status="superseded"),
                              {"revision": 3, "status": "deployed", "chart": "keystone-0.1.0",
                               "description": "Rollback to 1"}]


def _manager(tmp_path: Path, history: List[Dict[str, Any]], check: bool = False, **req: Any) -> ReleaseManager:
    helm = Helm(str(fake_helm(tmp_path, "v3.19.0", history)))
    return ReleaseManager(helm, ReleaseRequest(name="keystone", namespace="openstack", wait=False, **req),
                          check_mode=check)


def _calls(tmp_path: Path) -> List[str]:
    log = tmp_path / "calls.jsonl"
    return [json.loads(line)[0] for line in log.read_text().splitlines()] if log.exists() else []


def test_a_release_that_is_not_there_is_absent_already(tmp_path: Path) -> None:
    out = _manager(tmp_path, []).absent()
    assert out["changed"] is False and "uninstall" not in _calls(tmp_path)


def test_check_mode_says_an_uninstall_would_happen_and_runs_none(tmp_path: Path) -> None:
    out = _manager(tmp_path, DEPLOYED, check=True).absent()
    assert out["changed"] is True and "uninstall" not in _calls(tmp_path)


def test_nothing_to_roll_back_is_an_error_naming_the_release(tmp_path: Path) -> None:
    with pytest.raises(HelmError, match="release keystone does not exist in namespace openstack; there is nothing to roll back"):
        _manager(tmp_path, []).rolledback()


def test_a_rerun_of_a_default_rollback_does_not_go_further_back(tmp_path: Path) -> None:
    out = _manager(tmp_path, ROLLED_BACK).rolledback()
    assert out["changed"] is False and out["rolled_back_to"] == 1
    assert out["msg"] == "revision 3 is already a rollback to revision 1; give revision to roll back further"
    assert "rollback" not in _calls(tmp_path)


def test_present_needs_a_chart(tmp_path: Path) -> None:
    with pytest.raises(HelmError, match="chart is required for state=present"):
        _manager(tmp_path, DEPLOYED).present()
