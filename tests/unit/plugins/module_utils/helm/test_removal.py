"""plugins/module_utils/helm/removal.py: an uninstall that always ends: one
stopped in its delete hooks (now or by an earlier run) is done again with
--no-hooks and the hooks it left deleted; kept objects listed, or purged."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any, Dict, List, Sequence, Set, Tuple

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.helm import removal
from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import NotFoundError
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm, HelmError, Result
from ansible_collections.lcm.openstack.plugins.module_utils.helm.release import ReleaseManager, ReleaseRequest
from support.fake_leases import Leases
from support.paths import UNIT_FIXTURES

MANIFEST = """---
# Source: keystone/templates/secret-fernet-keys.yaml
apiVersion: v1
kind: Secret
metadata:
  name: keystone-fernet-keys
  annotations:
    helm.sh/resource-policy: keep
---
# Source: keystone/templates/configmap-bin.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: keystone-bin
"""
HOOKS = """---
# Source: keystone/templates/job-credential-cleanup.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: keystone-credential-cleanup
  annotations:
    helm.sh/hook: pre-delete
"""


class _Helm(Helm):
    """Answers each uninstall with the next of `answers` (rc, stderr)."""

    def __init__(self, answers: List[Any], left: str = "deployed") -> None:
        super().__init__("/usr/bin/helm", _version="v3.19.0")
        self.answers, self.left, self.ran = list(answers), left, []  # type: ignore[var-annotated]

    def _run_once(self, args: Sequence[str], timeout: Any) -> Result:
        self.ran.append(list(args))
        rc, stderr = self.answers.pop(0)
        return Result(["helm", *args], rc, "", stderr)

    def history(self, release: str, namespace: str) -> List[Dict[str, Any]]:
        return [{"revision": 2, "status": self.left}]

    def get_manifest(self, release: str, namespace: str) -> str:
        return MANIFEST

    def get_hooks(self, release: str, namespace: str) -> str:
        return HOOKS


@pytest.fixture
def deleted(monkeypatch: pytest.MonkeyPatch) -> List[str]:
    gone: List[str] = []

    def delete(dyn: Any, namespace: str, refs: Any) -> List[Any]:
        refs = list(refs)
        gone.extend(str(r) for r in refs)
        return refs
    monkeypatch.setattr(removal.release_keep, "delete", delete)
    return gone


def _uninstall(helm: _Helm, purge: bool = False, status: str = "deployed", dyn: Any = object()) -> Dict[str, Any]:
    return removal.uninstall(helm, "keystone", "openstack", 300, keep_history=True, wait=True, purge=purge,
                             dyn=dyn, status=status)


def test_a_release_an_earlier_run_left_uninstalling_goes_straight_to_no_hooks(deleted: List[str]) -> None:
    helm = _Helm([(0, "")])
    out = _uninstall(helm, status="uninstalling", dyn=None)
    assert len(helm.ran) == 1 and helm.ran[0][-1] == "--no-hooks"
    assert out["msg"] == ("an earlier uninstall stopped in its hooks (the release was left uninstalling); "
                          "uninstalled with --no-hooks") and deleted == []


def test_when_no_hooks_fails_too_both_reasons_are_given(deleted: List[str]) -> None:
    helm = _Helm([(1, "Error: timed out waiting for the condition"), (1, "Error: connection refused")],
                 left="uninstalling")
    with pytest.raises(HelmError) as err:
        _uninstall(helm)
    assert "the retry with --no-hooks failed too" in str(err.value) and "connection refused" in str(err.value)


# -- through helm_release (ReleaseManager.absent), Helm a script, the kept objects in memory --

class FakeResource:
    def __init__(self, store: Set[Tuple[str, str]], kind: str) -> None:
        self.store, self.kind = store, kind

    def get(self, name: str, namespace: str) -> Any:
        if (self.kind, name) not in self.store:
            raise NotFoundError(type("E", (), {"status": 404, "reason": "NotFound", "body": "", "headers": {}})())
        return {"kind": self.kind, "name": name}

    def delete(self, name: str, namespace: str, body: Dict[str, Any]) -> None:
        self.get(name, namespace)
        self.store.discard((self.kind, name))


class FakeDyn:
    """The few dynamic-client calls release_keep makes, over a set of (kind, name);
    and the release's Lease, which helm_release holds around the uninstall."""

    def __init__(self, objects: Set[Tuple[str, str]]) -> None:
        self.objects = objects
        self.resources = self
        self.leases = Leases()

    def get(self, api_version: str, kind: str) -> Any:  # resources.get
        return self.leases if kind == "Lease" else FakeResource(self.objects, kind)


def uninstall_helm(tmp_path: Path, first_status: str, hang: bool) -> Path:
    """A helm whose uninstall fails in its hooks (leaving the release
    uninstalling) unless --no-hooks is given; every call is logged."""
    state = tmp_path / "status"
    state.write_text(first_status)
    log = tmp_path / "calls.jsonl"
    manifest = yaml.safe_dump_all(_render()[2:3] + _render()[4:])
    hooks = yaml.safe_dump_all(_render()[:2] + _render()[3:4])
    script = tmp_path / "helm"
    script.write_text(f"""#!/usr/bin/env python3
import json, sys
args = sys.argv[1:]
open({str(log)!r}, "a").write(json.dumps(args) + "\\n")
status = open({str(state)!r}).read()
if args[:1] == ["version"]:
    print("v3.22.0", end="")
elif args[:1] == ["history"]:
    print(json.dumps([{{"revision": 1, "status": status, "chart": "keystone-0.1.0"}}]))
elif args[:2] == ["get", "manifest"]:
    print({manifest!r})
elif args[:2] == ["get", "hooks"]:
    print({hooks!r})
elif args[:1] == ["uninstall"]:
    if {hang!r} and "--no-hooks" not in args:
        open({str(state)!r}, "w").write("uninstalling")
        print("Error: 1 error occurred: job keystone-credential-cleanup: timed out waiting for the condition",
              file=sys.stderr)
        sys.exit(1)
    open({str(state)!r}, "w").write("uninstalled")
""")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def calls(tmp_path: Path) -> List[List[str]]:
    return [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]


def uninstall(tmp_path: Path, dyn: FakeDyn, first_status: str = "deployed", hang: bool = False,
              purge: bool = False) -> Dict[str, Any]:
    helm = Helm(str(uninstall_helm(tmp_path, first_status, hang)))
    req = ReleaseRequest(name="keystone", namespace="openstack", timeout=30, purge_kept=purge)
    return ReleaseManager(helm, req, dyn).absent()


def test_an_uninstall_hung_in_its_hooks_is_retried_without_them_and_says_so(tmp_path: Path) -> None:
    dyn = FakeDyn({("Job", "keystone-credential-cleanup"), ("Secret", "keystone-fernet-keys")})
    result = uninstall(tmp_path, dyn, hang=True)
    runs = [c for c in calls(tmp_path) if c[0] == "uninstall"]
    assert [("--no-hooks" in c) for c in runs] == [False, True]
    assert all(c[c.index("--timeout") + 1] == "30s" for c in runs)
    assert result["hooks_skipped"] is True and result["changed"] is True
    assert result["msg"].startswith("helm uninstall stopped in its delete hooks (helm uninstall failed: ")
    assert result["msg"].endswith("uninstalled with --no-hooks and deleted the hooks it left: "
                                  "Job/keystone-credential-cleanup")
    assert ("Job", "keystone-credential-cleanup") not in dyn.objects
    # Without a purge the kept Secrets stay, and are listed.
    assert ("Secret", "keystone-fernet-keys") in dyn.objects
    assert result["kept"] == ["Secret/keystone-fernet-keys", "Secret/keystone-credential-keys"]


def test_a_release_left_uninstalling_goes_straight_to_no_hooks(tmp_path: Path) -> None:
    result = uninstall(tmp_path, FakeDyn(set()), first_status="uninstalling", hang=True)
    assert [("--no-hooks" in c) for c in calls(tmp_path) if c[0] == "uninstall"] == [True]
    assert "release was left uninstalling" in result["msg"]


def test_a_clean_uninstall_runs_once_and_a_purge_deletes_the_kept_objects(tmp_path: Path) -> None:
    dyn = FakeDyn({("Secret", "keystone-fernet-keys"), ("Secret", "keystone-credential-keys")})
    result = uninstall(tmp_path, dyn, purge=True)
    assert [("--no-hooks" in c) for c in calls(tmp_path) if c[0] == "uninstall"] == [False]
    assert result["hooks_skipped"] is False and "msg" not in result
    assert result["purged"] == ["Secret/keystone-fernet-keys", "Secret/keystone-credential-keys"]
    assert result["kept"] == [] and dyn.objects == set()


def test_an_uninstall_that_fails_outside_its_hooks_is_not_retried(tmp_path: Path) -> None:
    helm = uninstall_helm(tmp_path, "deployed", hang=False)
    helm.write_text(helm.read_text().replace('open({!r}, "w").write("uninstalled")'.format(
        str(tmp_path / "status")), 'print("Error: forbidden", file=sys.stderr); sys.exit(1)'))
    with pytest.raises(HelmError, match="helm uninstall failed: forbidden"):
        ReleaseManager(Helm(str(helm)), ReleaseRequest(name="keystone", namespace="openstack"),
                       FakeDyn(set())).absent()
    assert [("--no-hooks" in c) for c in calls(tmp_path) if c[0] == "uninstall"] == [False]


def _render() -> Any:
    return yaml.safe_load((UNIT_FIXTURES / "release" / "install_render.yaml").read_text())
