"""plugins/module_utils/helm/hooks.py: the hook Jobs a release whose jobs the
phases run leaves to them, and what Helm waited for when its hooks timed out."""

from __future__ import annotations

from typing import Any, Dict, List

from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import NotFoundError
from ansible_collections.lcm.openstack.plugins.module_utils.helm import hooks
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import HelmError
from support.fake_leases import error


def _job(name: str, hook: str, waits: str = "") -> Dict[str, Any]:
    env = [{"name": "DEPENDENCY_JOBS", "value": waits}] if waits else []
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "annotations": {"helm.sh/hook": hook}},
            "spec": {"template": {"spec": {"initContainers": [{"name": "init", "env": env}]}}}}


RENDER = [_job("mariadb-exporter-user", "post-install,post-upgrade", waits="mariadb-db-sync"),
          _job("mariadb-pre", "pre-upgrade"),
          {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "mariadb-test",
                                                           "annotations": {"helm.sh/hook": "test-success"}}},
          {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "keys",
                                                              "annotations": {"helm.sh/hook": "pre-install"}}},
          {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "mariadb-exporter"}}]


def test_the_hook_jobs_helm_would_run_are_those_of_the_operation_tests_aside() -> None:
    assert hooks.left_to_phases(RENDER, "install") == ["Job mariadb-exporter-user"]
    assert hooks.left_to_phases(RENDER, "upgrade") == ["Job mariadb-exporter-user", "Job mariadb-pre"]
    assert hooks.left_to_phases(RENDER[2:], "install") == []


class _Dict:
    def __init__(self, data: Dict[str, Any]) -> None:
        self.data = data

    def to_dict(self) -> Dict[str, Any]:
        return self.data


class _Resource:
    def __init__(self, kind: str, objects: Dict[str, Dict[str, Any]]) -> None:
        self.kind, self.objects = kind, objects

    def get(self, name: str = "", namespace: str = "", label_selector: str = "") -> _Dict:
        if self.kind == "Pod":
            return _Dict({"items": list(self.objects.values())})
        if name not in self.objects:
            raise error(NotFoundError, 404)
        return _Dict(self.objects[name])


class _Dyn:
    def __init__(self, jobs: Dict[str, Dict[str, Any]], pods: Dict[str, Dict[str, Any]]) -> None:
        self.resources = self
        self.by_kind = {"Job": _Resource("Job", jobs), "Pod": _Resource("Pod", pods)}

    def get(self, api_version: str, kind: str) -> _Resource:
        return self.by_kind[kind]


def test_a_timeout_names_the_hook_job_its_pod_and_what_its_init_container_waits_for() -> None:
    pod = {"metadata": {"name": "mariadb-exporter-user-x7k2p"},
           "status": {"phase": "Pending", "initContainerStatuses": [{"name": "init", "state": {"running": {}}}]}}
    dyn = _Dyn({"mariadb-exporter-user": {"kind": "Job", "metadata": {"name": "mariadb-exporter-user", "uid": "u1"},
                                          "status": {}},
                "mariadb-pre": {"metadata": {"name": "mariadb-pre", "uid": "u2"}, "status": {"succeeded": 1}}},
               {"p": pod})
    exc = HelmError("helm install of mariadb failed: failed post-install: 1 error occurred: "
                    "timed out waiting for the condition")
    hooks.explain_timeout(exc, dyn, "openstack", RENDER, "install")
    assert str(exc).endswith(
        "timed out waiting for the condition (Helm waited for its hooks: Job mariadb-exporter-user not complete: "
        "pod mariadb-exporter-user-x7k2p Pending: init container init running; its init container waits for "
        "Job mariadb-db-sync)")
    quiet = HelmError("timed out waiting for the condition")
    hooks.explain_timeout(quiet, _Dyn({}, {}), "openstack", RENDER, "install")  # nothing to say: unchanged
    assert str(quiet) == "timed out waiting for the condition"


def test_declared_dependencies_are_read_from_one_place() -> None:
    names: List[str] = [d.describe() for d in __import__(
        "ansible_collections.lcm.openstack.plugins.module_utils.kube.entrypoint", fromlist=["declared"]
    ).declared(RENDER[0])]
    assert names == ["Job mariadb-db-sync"]
