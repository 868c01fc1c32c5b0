"""plugins/module_utils/helm/removal.py: an uninstall that always ends: one
stopped in its delete hooks (now or by an earlier run) is done again with
--no-hooks and the hooks it left deleted; kept objects listed, or purged."""

from __future__ import annotations

from typing import Any, Dict, List, Sequence

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.helm import removal
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm, HelmError, Result

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


def test_an_uninstall_that_works_lists_what_helm_kept(deleted: List[str]) -> None:
    helm = _Helm([(0, "")])
    out = _uninstall(helm)
    assert helm.ran == [["uninstall", "keystone", "--namespace", "openstack", "--timeout", "300s", "--keep-history",
                         "--wait"]]
    assert out["kept"] == ["Secret/keystone-fernet-keys"] and out["purged"] == [] and deleted == []
    assert out["hooks_skipped"] is False and out["msg"] == ""


def test_a_purge_deletes_what_helm_kept(deleted: List[str]) -> None:
    out = _uninstall(_Helm([(0, "")]), purge=True)
    assert out["purged"] == ["Secret/keystone-fernet-keys"] == deleted and out["kept"] == []


def test_stopped_in_its_delete_hooks_it_is_done_again_without_them(deleted: List[str]) -> None:
    helm = _Helm([(1, "Error: job keystone-credential-cleanup failed: BackoffLimitExceeded"), (0, "")],
                 left="uninstalling")
    out = _uninstall(helm)
    assert helm.ran[1][-1] == "--no-hooks" and out["hooks_skipped"] is True
    assert deleted == ["Job/keystone-credential-cleanup"]
    assert out["msg"].startswith("helm uninstall stopped in its delete hooks (")
    assert out["msg"].endswith("uninstalled with --no-hooks and deleted the hooks it left: Job/keystone-credential-cleanup")


def test_a_release_an_earlier_run_left_uninstalling_goes_straight_to_no_hooks(deleted: List[str]) -> None:
    helm = _Helm([(0, "")])
    out = _uninstall(helm, status="uninstalling", dyn=None)
    assert len(helm.ran) == 1 and helm.ran[0][-1] == "--no-hooks"
    assert out["msg"] == ("an earlier uninstall stopped in its hooks (the release was left uninstalling); "
                          "uninstalled with --no-hooks") and deleted == []


def test_any_other_failure_is_raised_as_helm_said_it(deleted: List[str]) -> None:
    helm = _Helm([(1, "Error: uninstall: Release not loaded: keystone: query: failed to query with labels")])
    with pytest.raises(HelmError, match="Release not loaded"):
        _uninstall(helm)
    assert len(helm.ran) == 1 and deleted == []


def test_when_no_hooks_fails_too_both_reasons_are_given(deleted: List[str]) -> None:
    helm = _Helm([(1, "Error: timed out waiting for the condition"), (1, "Error: connection refused")],
                 left="uninstalling")
    with pytest.raises(HelmError) as err:
        _uninstall(helm)
    assert "the retry with --no-hooks failed too" in str(err.value) and "connection refused" in str(err.value)
