"""plugins/module_utils/helm/interrupted.py, and Helm.run's reads: a Helm
command whose connection to the apiserver broke runs again; an answer does
not. Helm is replaced by scripted results (no process, no cluster)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.helm import cli, interrupted, storage
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm, HelmError, Result
from ansible_collections.lcm.openstack.plugins.module_utils.helm.release import ReleaseManager, ReleaseRequest

RESET = ('Error: UPGRADE FAILED: update: failed to update: Put "https://127.0.0.1:38861/api/v1/namespaces/'
         'openstack/secrets/sh.helm.release.v1.keystone.v2": read tcp 127.0.0.1:42870->127.0.0.1:38861: '
         'read: connection reset by peer\n')
HISTORY_RESET = 'Error: Get "https://10.0.0.1:6443/api/v1/namespaces/openstack/secrets": unexpected EOF\n'


@pytest.fixture(autouse=True)
def no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli.time, "sleep", lambda _s: None)


class _Scripted(Helm):
    """Helm whose every run returns the next scripted (rc, stdout, stderr)."""

    def __init__(self, script: List[Tuple[int, str, str]]) -> None:
        super().__init__("helm")
        self.script, self.ran = list(script), []  # type: ignore[var-annotated]

    def _run_once(self, args: Any, timeout: Any) -> Result:
        self.ran.append(list(args))
        rc, out, err = self.script.pop(0)
        return Result(["helm", *args], rc, out, err)


@pytest.mark.parametrize("stderr, lost", [
    (RESET, True), (HISTORY_RESET, True),
    ("Error: Get \"https://10.0.0.1:6443/version\": dial tcp 10.0.0.1:6443: connect: connection refused", True),
    ("Error: Get \"https://10.0.0.1:6443/api\": http2: client connection lost", True),
    ("Error: UPGRADE FAILED: cannot patch \"keystone-api\" with kind Deployment: Deployment.apps "
     "\"keystone-api\" is invalid: spec.replicas: Invalid value: -1", False),
    ("Error: UPGRADE FAILED: context deadline exceeded", False),
    ("Error: release: not found", False),
])
def test_a_broken_connection_is_told_from_an_answer(stderr: str, lost: bool) -> None:
    assert cli.connection_lost(stderr) is lost


def test_a_read_whose_connection_broke_runs_again() -> None:
    helm = _Scripted([(1, "", HISTORY_RESET), (1, "", HISTORY_RESET), (0, "[]", "")])
    assert helm.history("keystone", "openstack") == []
    assert len(helm.ran) == 3


def test_a_read_answered_with_an_error_is_not_run_again() -> None:
    helm = _Scripted([(1, "", "Error: secrets is forbidden: User cannot list resource\n")])
    with pytest.raises(HelmError, match="forbidden"):
        helm.history("keystone", "openstack")
    assert len(helm.ran) == 1


def test_run_alone_never_runs_a_change_again() -> None:
    helm = _Scripted([(1, "", RESET)])
    assert helm.run(["upgrade", "keystone", "chart"], check=False).rc == 1
    assert len(helm.ran) == 1


def _history(status: str, revision: int = 2) -> List[Dict[str, Any]]:
    return [{"revision": 1, "status": "superseded"}, {"revision": revision, "status": status}]


@pytest.fixture
def marked(monkeypatch: pytest.MonkeyPatch) -> List[Tuple[str, str, int, str]]:
    calls: List[Tuple[str, str, int, str]] = []

    def mark_failed(_dyn: Any, namespace: str, release: str, revision: int, description: str,
                    of: Optional[str] = "Secret") -> bool:
        assert of == "Secret"  # HELM_DRIVER unset: Helm's Secrets
        calls.append((namespace, release, revision, description))
        return True
    monkeypatch.setattr(storage, "mark_failed", mark_failed)
    return calls


@pytest.mark.parametrize("command, stderr, status, expected", [
    (["helm", "upgrade", "keystone"], RESET, "pending-upgrade",
     "revision 2 was left pending-upgrade and is recorded failed"),
    (["helm", "rollback", "keystone", "1"], RESET, "pending-rollback",
     "revision 2 was left pending-rollback and is recorded failed"),
    (["helm", "upgrade", "keystone"], RESET, "failed", "revision 2 failed"),
    (["helm", "upgrade", "keystone"], RESET, "deployed", None),  # nothing to run again for
    (["helm", "uninstall", "keystone"], RESET, "uninstalling", None),  # not repeatable here
    (["helm", "upgrade", "keystone"], "Error: UPGRADE FAILED: spec.replicas: Invalid value", "failed", None),
])
def test_what_may_run_again(command: List[str], stderr: str, status: str, expected: Any,
                            marked: List[Tuple[str, str, int, str]]) -> None:
    result = Result(command, 1, "", stderr)
    why = interrupted.again(result, lambda: _history(status), object(), "keystone", "openstack")
    assert why == expected
    if status.startswith("pending") and expected:
        [(namespace, release, revision, description)] = marked
        assert (namespace, release, revision) == ("openstack", "keystone", 2)
        assert description.startswith(f"{command[1]} interrupted: Helm lost its connection to the apiserver (")
    else:
        assert marked == []


def test_without_a_cluster_client_nothing_runs_again(marked: List[Tuple[str, str, int, str]]) -> None:
    result = Result(["helm", "upgrade", "keystone"], 1, "", RESET)
    assert interrupted.again(result, lambda: _history("pending-upgrade"), None, "keystone", "openstack") is None
    assert marked == []


def test_a_pending_revision_only_helm_reaches_is_left_as_helm_left_it() -> None:
    """Under HELM_DRIVER=sql the record is a row only Helm reaches: it is not
    rewritten, and the upgrade fails as Helm said, not run again."""
    class _NoCluster:
        @property
        def resources(self) -> Any:
            raise AssertionError("nothing is read or written in the cluster")
    result = Result(["helm", "upgrade", "keystone"], 1, "", RESET)
    assert interrupted.again(result, lambda: _history("pending-upgrade"), _NoCluster(), "keystone", "openstack",
                             of=None) is None


class _Guard:
    warnings: List[str] = []


def test_an_upgrade_cut_off_is_run_again_and_said(marked: List[Tuple[str, str, int, str]]) -> None:
    """The upgrade's record write was reset: its revision is recorded failed
    and the upgrade runs again; the task says so in a warning."""
    helm = _Scripted([(1, "", RESET), (0, '[{"revision": 1, "status": "superseded"}, '
                                          '{"revision": 2, "status": "pending-upgrade"}]', ""), (0, "", "")])
    manager = ReleaseManager(helm, ReleaseRequest(name="keystone", namespace="openstack", chart="chart"))
    manager._dyn, manager._guard = object(), _Guard()  # pylint: disable=protected-access
    manager._run(["upgrade", "keystone", "chart"], what="helm upgrade of keystone")  # pylint: disable=protected-access
    assert [r[0] for r in helm.ran] == ["upgrade", "history", "upgrade"]
    assert [m[2] for m in marked] == [2]
    [note] = manager.warnings
    assert note.startswith("helm upgrade of keystone lost its connection to the apiserver (")
    assert note.endswith("revision 2 was left pending-upgrade and is recorded failed; ran it again")


def test_an_upgrade_that_keeps_losing_its_connection_fails_in_the_end(
        marked: List[Tuple[str, str, int, str]]) -> None:
    failed = (0, '[{"revision": 3, "status": "failed"}]', "")
    helm = _Scripted([(1, "", RESET), failed, (1, "", RESET), failed, (1, "", RESET)])
    manager = ReleaseManager(helm, ReleaseRequest(name="keystone", namespace="openstack", chart="chart"))
    manager._dyn, manager._guard = object(), _Guard()  # pylint: disable=protected-access
    run = manager._run  # pylint: disable=protected-access
    with pytest.raises(HelmError, match="connection reset by peer"):
        run(["upgrade", "keystone", "chart"], what="helm upgrade of keystone")
    assert [r[0] for r in helm.ran].count("upgrade") == interrupted.ATTEMPTS
