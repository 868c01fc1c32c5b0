"""plugins/module_utils/phase/stop.py: a failed phase suspends its unfinished Jobs, and records them."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Dict, List, Optional

from kubernetes.dynamic.exceptions import DynamicApiError

from ansible_collections.lcm.openstack.plugins.module_utils.phase import stop

PHASE = {"metadata": {"name": "keystone-install-1a2b3c4d", "namespace": "openstack", "uid": "phase-uid"}}


def _job(name: str, owner: str = "phase-uid", condition: Optional[str] = None, active: int = 1,
         suspend: bool = False) -> Dict[str, Any]:
    status: Dict[str, Any] = {"active": active}
    if condition:
        status = {"conditions": [{"type": condition, "status": "True"}]}
    return {"metadata": {"name": name, "ownerReferences": [{"kind": "Phase", "uid": owner, "controller": True}]},
            "spec": {"suspend": suspend}, "status": status}


class _Jobs:
    def __init__(self, items: List[Dict[str, Any]], refuse: Optional[int] = None) -> None:
        self.items, self.refuse = items, refuse
        self.listed: List[Dict[str, Any]] = []
        self.patched: List[Dict[str, Any]] = []

    def get(self, **kw: Any) -> Any:
        self.listed.append(kw)
        return SimpleNamespace(to_dict=lambda: {"items": self.items})

    def patch(self, **kw: Any) -> None:
        if self.refuse:
            err = SimpleNamespace(status=self.refuse, reason="Forbidden", headers={}, body=b'{"message": '
                                  b'"jobs.batch \\"x\\" is forbidden: User cannot patch resource \\"jobs\\" in API '
                                  b'group \\"batch\\""}')
            raise DynamicApiError(err)
        self.patched.append(kw)


def _dyn(jobs: _Jobs) -> Any:
    return SimpleNamespace(resources=SimpleNamespace(get=lambda **kw: jobs))


def test_only_unfinished_jobs_of_this_phase_are_suspended() -> None:
    jobs = _Jobs([_job("keystone-db-sync", active=1), _job("keystone-db-init", condition="Complete"),
                  _job("keystone-bootstrap", condition="Failed"), _job("keystone-other", owner="another-phase"),
                  _job("keystone-done-already", suspend=True), _job("keystone-ks-user", active=0)])
    stopped = stop.stop_jobs(_dyn(jobs), PHASE)
    assert jobs.listed == [{"namespace": "openstack", "label_selector": "lifecycle.openstack.org/phase=keystone-install-1a2b3c4d"}]
    assert stopped == [{"name": "keystone-db-sync", "action": "Suspended", "activePods": 1},
                       {"name": "keystone-ks-user", "action": "Suspended", "activePods": 0}]
    assert [p["name"] for p in jobs.patched] == ["keystone-db-sync", "keystone-ks-user"]
    patch = jobs.patched[0]
    assert patch["body"] == {"spec": {"suspend": True}}
    assert patch["content_type"] == "application/merge-patch+json"
    assert patch["field_manager"] == "lcm.openstack" and patch["namespace"] == "openstack"
    assert stop.describe(stopped) == "suspended Job keystone-db-sync, keystone-ks-user"


def test_a_job_that_cannot_be_stopped_is_recorded_not_raised() -> None:
    stopped = stop.stop_jobs(_dyn(_Jobs([_job("keystone-db-sync")], refuse=403)), PHASE)
    assert [(s["name"], s["action"]) for s in stopped] == [("keystone-db-sync", "NotStopped")]
    assert "may not patch jobs" in stopped[0]["message"]
    assert stop.describe(stopped).startswith("could not stop Job keystone-db-sync: forbidden")


def test_nothing_to_stop_says_nothing() -> None:
    assert stop.stop_jobs(_dyn(_Jobs([])), PHASE) == []
    assert stop.describe([]) == ""


def test_a_broken_connection_is_recorded_too() -> None:
    def refuse(**_kw: Any) -> Any:
        raise ConnectionError("connection refused")
    stopped = stop.stop_jobs(SimpleNamespace(resources=SimpleNamespace(get=refuse)), PHASE)
    assert stopped == [{"name": "*", "action": "NotStopped",
                        "message": "could not list jobs in namespace openstack: ConnectionError: connection refused"}]


def _unowned(name: str, uid: str) -> Dict[str, Any]:
    """A Job a workload waits for: no owner reference, the run's uid as a label."""
    job = _job(name)
    job["metadata"].pop("ownerReferences")
    job["metadata"]["labels"] = {"lifecycle.openstack.org/phase": PHASE["metadata"]["name"],
                                 "lifecycle.openstack.org/phase-uid": uid}
    return job


def test_a_job_the_run_made_without_an_owner_is_suspended_too() -> None:
    jobs = _Jobs([_unowned("keystone-db-sync", "phase-uid"), _unowned("keystone-fernet-setup", "earlier-run")])
    stopped = stop.stop_jobs(_dyn(jobs), PHASE)
    assert stopped == [{"name": "keystone-db-sync", "action": "Suspended", "activePods": 1}]
    assert [p["name"] for p in jobs.patched] == ["keystone-db-sync"]
