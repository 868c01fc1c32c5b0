"""plugins/module_utils/adapter: the parameters Ansible echoes back (the
invocation) show no credential, however short, in the phase and helm_release
adapters; release_info masks values the same way."""

from __future__ import annotations

import copy
from typing import Any, Dict, List

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.helm import info as release_info
from ansible_collections.lcm.openstack.plugins.module_utils.adapter import common
from ansible_collections.lcm.openstack.plugins.module_utils.adapter import phase as adapter
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import MASK, Redactor
from support.paths import UNIT_FIXTURES


class _Exit(Exception):
    pass


class _Module:
    """What the adapters use of an AnsibleModule; exits record the echoed parameters."""

    def __init__(self, params: Dict[str, Any]) -> None:
        self.params = params
        self.check_mode = False
        self._diff = False
        self.no_log_values: set = set()
        self.exited: Dict[str, Any] = {}
        self.warnings: List[str] = []

    def warn(self, text: str) -> None:
        self.warnings.append(text)

    def exit_json(self, **kw: Any) -> None:
        self.exited = dict(kw, invocation=copy.deepcopy(self.params))
        raise _Exit()

    fail_json = exit_json


VALUES = yaml.safe_load((UNIT_FIXTURES / "release" / "echoed_values.yaml").read_text())


def _phase_params(values: Dict[str, Any]) -> Dict[str, Any]:
    return {"type": "install", "service": "keystone", "release": None, "namespace": "openstack", "name": None,
            "target_version": None, "source": {"chart": "oci://registry.example/keystone", "values": values},
            "release_revision": None, "timeout": 600, "wait": True, "binary_path": None, "state": "present",
            "upgrade": None, "rollback": None, "uninstall": None, "test": None, "traffic": None, "failure": {}}


def _masked_echo(values: Dict[str, Any]) -> Dict[str, Any]:
    return values["endpoints"]["identity"]["auth"]["admin"]


class _Runner:
    """Stands in for PhaseRunner: records the values it was given."""

    seen: List[Dict[str, Any]] = []
    failing = False
    outcome: Exception = RuntimeError("no outcome set")

    def __init__(self, dyn: Any, req: Any, check_mode: bool = False) -> None:
        _Runner.seen.append(copy.deepcopy(req.source.values))
        self.redactor = Redactor()
        self.warnings: List[str] = []

    def present(self) -> Dict[str, Any]:
        if _Runner.failing:
            raise _Runner.outcome
        return {"changed": True, "phase": {}, "objects_applied": []}


@pytest.fixture
def fake_engine(monkeypatch: pytest.MonkeyPatch) -> Any:
    _Runner.seen, _Runner.failing = [], False
    monkeypatch.setattr(adapter, "PhaseRunner", _Runner)
    monkeypatch.setattr(adapter, "client", lambda module: None)
    return _Runner


@pytest.mark.parametrize("fails", [False, True])
def test_the_phase_echoes_its_values_masked_and_runs_with_them_whole(fake_engine: Any, fails: bool) -> None:
    if fails:
        fake_engine.outcome, fake_engine.failing = PhaseError("refused"), True
    module = _Module(_phase_params(copy.deepcopy(VALUES)))
    with pytest.raises(_Exit):
        adapter.run_phase(module)
    assert fake_engine.seen == [VALUES]  # the engine rendered with the real values
    echoed = module.exited["invocation"]["source"]["values"]
    assert _masked_echo(echoed) == {"username": "admin", "password": MASK}
    assert echoed["endpoints"]["oslo_db"]["auth"]["keystone"]["password"] == MASK
    assert echoed["conf"] == VALUES["conf"]  # configuration is no credential
    assert "s3cr" not in str(module.exited)
    assert ("msg" in module.exited) is fails


def test_release_params_are_masked_by_key_secret_values_entirely() -> None:
    params = {"values": copy.deepcopy(VALUES), "secret_values": {"conf": {"ldap": {"bind_dn": "cn=x"}}},
              "set_values": [{"value": "endpoints.oslo_db.auth.admin.password=pw1", "value_type": "string"},
                             {"value": "pod.replicas.api=2", "value_type": "raw"}]}
    original = copy.deepcopy(params)
    set_values = params["set_values"]
    common.mask_release_params(params, Redactor())
    assert _masked_echo(params["values"])["password"] == MASK
    assert params["secret_values"] == {"conf": {"ldap": {"bind_dn": MASK}}}
    assert [e["value"] for e in params["set_values"]] == [
        f"endpoints.oslo_db.auth.admin.password={MASK}", "pod.replicas.api=2"]
    assert set_values == original["set_values"]  # the entries a request holds are not changed


def test_release_info_masks_short_credentials_under_their_keys() -> None:
    helm = type("H", (), {})()
    helm.redactor = Redactor()
    helm.check_version = lambda: None
    helm.history = lambda release, namespace: [{"revision": 1, "status": "deployed"}]
    helm.get_values = lambda release, namespace, all_values=False: copy.deepcopy(VALUES)
    helm.get_manifest = lambda release, namespace: ""
    (info,) = release_info.release_info(helm, "openstack", "keystone")
    assert _masked_echo(info["release_values"]) == {"username": "admin", "password": MASK}
    assert info["release_values"]["conf"] == VALUES["conf"]


def test_a_module_that_cannot_reach_the_apiserver_fails_with_one_line(monkeypatch: Any, tmp_path: Any) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))  # a kubeconfig that names no server
    for name in ("K8S_AUTH_HOST", "K8S_AUTH_API_KEY", "K8S_AUTH_KUBECONFIG", "K8S_AUTH_CONTEXT",
                 "KUBERNETES_SERVICE_HOST"):
        monkeypatch.delenv(name, raising=False)
    from urllib3.connectionpool import HTTPSConnectionPool
    from urllib3.exceptions import MaxRetryError, NewConnectionError

    from ansible_collections.lcm.openstack.plugins.module_utils.adapter.connection import reported

    class _Module:
        params: Dict[str, Any] = {"host": None}
        failed: Dict[str, Any] = {}

        def fail_json(self, **kw: Any) -> None:
            self.failed = kw
            raise SystemExit(1)

    @reported
    def run(_module: Any) -> None:
        raise MaxRetryError(HTTPSConnectionPool("127.0.0.1", 1), "/api",
                            NewConnectionError(None, "[Errno 111] Connection refused"))

    module = _Module()
    with pytest.raises(SystemExit):
        run(module)
    assert module.failed["msg"].startswith(f"cannot reach the apiserver at 127.0.0.1:1 (kubeconfig {tmp_path}/none "
                                           "(KUBECONFIG)): ")

    @reported
    def buggy(_module: Any) -> None:
        raise KeyError("metadata")
    with pytest.raises(KeyError):  # not a connection failure: raised as it is
        buggy(_Module())


def test_given_keeps_every_value_set_and_leaves_out_only_none() -> None:
    from ansible_collections.lcm.openstack.plugins.module_utils.adapter.common import given

    params = {"timeout": 0, "wait": False, "name": "", "release_revision": None, "other": 1}
    assert given(params, "timeout", "wait", "name", "release_revision", "missing") == {
        "timeout": 0, "wait": False, "name": ""}
