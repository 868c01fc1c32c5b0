"""plugins/module_utils/phase/runner.py: PhaseRunner refuses to start without the Phase CRD (no cluster needed)."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest
from kubernetes.dynamic.exceptions import ResourceNotFoundError

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError, KubeError, PhaseError
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
    with pytest.raises(KubeError) as err:
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


class _Stored:
    """The release's storage records of one kind, listed by label."""

    def __init__(self, items: List[Dict[str, Any]]) -> None:
        self.items, self.selectors = items, []  # type: ignore[var-annotated]

    def get(self, namespace: str, label_selector: str) -> Any:
        self.selectors.append(label_selector)
        items = self.items

        class _R:
            def to_dict(self) -> Dict[str, Any]:
                return {"items": items}
        return _R()


def _configmap(revision: int) -> Dict[str, Any]:
    from ansible_collections.lcm.openstack.plugins.module_utils.helm import storage
    record = {"version": revision, "config": {"from": "configmap"}, "chart": {"metadata": {"version": "0.1.0"}}}
    return {"metadata": {"labels": {"version": str(revision)}}, "data": {"release": storage.encode(record, "ConfigMap")}}


def test_the_deployed_release_is_read_where_helms_driver_keeps_it() -> None:
    configmaps = _Stored([_configmap(3)])
    dyn = _Dyn({("lifecycle.openstack.org/v1alpha1", "Phase"): object(), ("v1", "ConfigMap"): configmaps})
    runner = PhaseRunner(dyn, _req(), env={"HELM_DRIVER": "configmap"})
    deployed = runner._deployed()  # pylint: disable=protected-access
    assert (deployed.revision, deployed.values) == (3, {"from": "configmap"})
    assert configmaps.selectors == ["owner=helm,name=keystone,status=deployed"]
    assert ("v1", "Secret") not in [(c.get("api_version"), c.get("kind")) for c in dyn.resources.calls]


def test_under_the_sql_driver_the_deployed_release_is_asked_of_helm(tmp_path: Any) -> None:
    import json
    import stat
    helm = tmp_path / "helm"
    log = tmp_path / "calls"
    history = json.dumps([{"revision": 1, "status": "superseded"}, {"revision": 2, "status": "deployed"}])
    helm.write_text(f"""#!/bin/sh
echo "$HELM_DRIVER $*" >> {log}
case "$1" in history) echo '{history}';; get) echo '{{"from": "sql"}}';; esac
""")
    helm.chmod(helm.stat().st_mode | stat.S_IEXEC)
    dyn = _Dyn({("lifecycle.openstack.org/v1alpha1", "Phase"): object()})  # no Secret, no ConfigMap served
    runner = PhaseRunner(dyn, _req(), env={"HELM_DRIVER": "sql", "HELM_BIN": str(helm)})
    deployed = runner._deployed()  # pylint: disable=protected-access
    assert (deployed.revision, deployed.values) == (2, {"from": "sql"})
    assert [line.split()[:3] for line in log.read_text().splitlines()] == [
        ["sql", "history", "keystone"], ["sql", "get", "values"]]


def test_under_the_memory_driver_the_phase_is_refused_naming_helm_driver() -> None:
    dyn = _Dyn({("lifecycle.openstack.org/v1alpha1", "Phase"): object()})
    with pytest.raises(InputError, match="^HELM_DRIVER=memory keeps a release only as long as one Helm process"):
        PhaseRunner(dyn, _req(), env={"HELM_DRIVER": "memory"})._deployed()  # pylint: disable=protected-access
