"""plugins/module_utils/phase/runner.py: PhaseRunner refuses to start without the Phase CRD (no cluster needed)."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest
from kubernetes.dynamic.exceptions import ResourceNotFoundError

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.phase import record as phase_record
from ansible_collections.lcm.openstack.plugins.module_utils.phase.runner import PhaseRunner
from ansible_collections.lcm.openstack.plugins.module_utils.phase.spec import PhaseRequest, Source


class _Resources:
    def __init__(self, known: Dict[tuple, Any]) -> None:
        self.known = known
        self.calls: List[Dict[str, str]] = []

    def get(self, **kw: str) -> Any:
        self.calls.append(kw)
        try:
            return self.known[(kw.get("api_version"), kw.get("kind"))]
        except KeyError:
            raise ResourceNotFoundError(f"No matches found for {kw}") from None


class _Dyn:
    def __init__(self, known: Dict[tuple, Any]) -> None:
        self.resources = _Resources(known)


def _req() -> PhaseRequest:
    return PhaseRequest(type="install", service="keystone", release="keystone", namespace="openstack",
                        source=Source(chart="oci://registry.example/keystone",
                                      values={"endpoints": {"auth": {"password": "Values-Secret-1"}}}))


def test_missing_phase_crd_says_run_the_crds_role() -> None:
    dyn = _Dyn({})
    with pytest.raises(PhaseError) as err:
        PhaseRunner(dyn, _req())
    msg = str(err.value)
    assert "run the lcm.openstack.crds role first" in msg
    assert "phases.lifecycle.openstack.org" in msg
    assert isinstance(err.value.__cause__, ResourceNotFoundError)
    assert dyn.resources.calls == [{"api_version": "lifecycle.openstack.org/v1alpha1", "kind": "Phase"}]


def test_phase_resource_found() -> None:
    phases = object()
    dyn = _Dyn({("lifecycle.openstack.org/v1alpha1", "Phase"): phases})
    runner = PhaseRunner(dyn, _req(), env={})
    assert runner.phases.resource is phases  # behind crd.CrdResource, for a stale discovery cache
    assert runner.env == {}
    # the values' credentials are known to the redactor from the start
    assert runner.redactor.redact("Values-Secret-1") == "********"


class _Phases:
    """Phases of which another run created the one asked for a moment earlier."""

    def __init__(self, other: Dict[str, Any]) -> None:
        self.other = other

    def create(self, body: Dict[str, Any], namespace: str) -> Any:
        import json

        from kubernetes.client.rest import ApiException
        from kubernetes.dynamic.exceptions import DynamicApiError
        exc = ApiException(status=409, reason="Conflict")
        exc.body = json.dumps({"kind": "Status", "code": 409, "reason": "AlreadyExists", "message":
                               f'phases.lifecycle.openstack.org "{body["metadata"]["name"]}" already exists'})
        raise DynamicApiError(exc)

    def get(self, name: str, namespace: str) -> Any:
        class _R:
            def __init__(self, data: Dict[str, Any]) -> None:
                self.data = data

            def to_dict(self) -> Dict[str, Any]:
                return self.data
        return _R(self.other)


def test_a_phase_another_run_created_first_is_refused_naming_what_won() -> None:
    other = {"metadata": {"name": "keystone-install-1f2e3d4c"}, "status": {"state": "Running"}}
    dyn = _Dyn({("lifecycle.openstack.org/v1alpha1", "Phase"): _Phases(other)})
    runner = PhaseRunner(dyn, _req(), env={})
    with pytest.raises(PhaseError) as err:
        phase_record.create(runner.phases, {"metadata": {"name": "keystone-install-1f2e3d4c",
                                                         "namespace": "openstack"}}, "keystone")
    msg = str(err.value)
    assert "another run created Phase keystone-install-1f2e3d4c for keystone at the same moment (Running)" in msg
    assert "409" not in msg and "already exists" not in msg
