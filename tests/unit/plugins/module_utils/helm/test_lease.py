"""plugins/module_utils/helm/lease.py: one Helm operation per release, by a
Lease; and helm_release holding it around its commands (Helm replaced by a
script, the apiserver's Leases by a fake)."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import pytest
from kubernetes.dynamic.exceptions import ForbiddenError, NotFoundError
from support.fake_helm import fake_helm
from support.fake_leases import Dyn, Leases, error

from ansible_collections.lcm.openstack.plugins.module_utils.helm import lease as release_lease
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm, HelmError
from ansible_collections.lcm.openstack.plugins.module_utils.helm.release import ReleaseManager, ReleaseRequest
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import format_micro as micro

NAME = "lcm-helm-svc"
DEPLOYED = [{"revision": 1, "status": "deployed", "chart": "svc-0.1.0", "description": "Install complete"}]


def _now(ago: float = 0) -> str:
    return micro(datetime.now(timezone.utc) - timedelta(seconds=ago))


def _held_by(leases: Leases, holder: str, operation: str = "helm install", ago: float = 2,
             duration: int = 360) -> None:
    """The Lease as another run left it, renewed `ago` seconds ago."""
    leases.items[NAME] = {
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": NAME, "namespace": "ns", "resourceVersion": "7",
                     "annotations": {release_lease.ANNOTATION_OPERATION: operation}},
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": duration,
                 "acquireTime": "2026-11-23T12:00:00.000000Z", "renewTime": _now(ago), "leaseTransitions": 0}}


def _holder(leases: Leases) -> Optional[str]:
    return (leases.items.get(NAME, {}).get("spec") or {}).get("holderIdentity")


def _guard(leases: Leases, holder: str = "me/1", **kw: Any) -> release_lease.ReleaseGuard:
    return release_lease.ReleaseGuard(Dyn(leases), "ns", "svc", holder=holder, **kw)


# -- the guard ------------------------------------------------------------------
def test_the_lease_is_held_for_the_command_and_given_back_after() -> None:
    leases = Leases()
    with _guard(leases).held("helm install", 300, [], lambda: []):
        lease = leases.items[NAME]
        assert lease["spec"]["holderIdentity"] == "me/1"
        assert lease["spec"]["leaseDurationSeconds"] == 360  # the timeout and a margin
        assert lease["metadata"]["annotations"][release_lease.ANNOTATION_OPERATION] == "helm install"
        assert lease["metadata"]["labels"] == {"lifecycle.openstack.org/helm-release": "svc"}
    assert _holder(leases) is None and "acquireTime" not in leases.items[NAME]["spec"]


def test_the_lease_is_given_back_when_the_command_fails() -> None:
    leases = Leases()
    with pytest.raises(HelmError, match="boom"):
        with _guard(leases).held("helm upgrade", 300, DEPLOYED, lambda: DEPLOYED):
            raise HelmError("boom")
    assert _holder(leases) is None


def test_another_live_holder_refuses_in_one_line_and_the_command_does_not_run() -> None:
    leases = Leases()
    _held_by(leases, "awx-1/100", ago=4)
    ran = []
    with pytest.raises(KubeError) as err:
        with _guard(leases).held("helm install", 300, [], lambda: []):
            ran.append(True)
    msg = str(err.value)
    assert msg.startswith("another operation holds release svc: awx-1/100 (helm install) since "
                          "2026-11-23T12:00:00.000000Z, renewed 4s ago (Lease lcm-helm-svc in ns). Nothing was "
                          "changed. Wait for it to end, then run again; if that run is gone, the lease is free ")
    assert "\n" not in msg and not ran
    assert _holder(leases) == "awx-1/100"  # untouched


def test_the_same_run_holds_it_again() -> None:
    """A flow calls helm_release more than once in one playbook run."""
    leases = Leases()
    _held_by(leases, "me/1", ago=1)
    with _guard(leases).held("helm upgrade", 300, DEPLOYED, lambda: DEPLOYED):
        assert leases.items[NAME]["spec"]["acquireTime"] == "2026-11-23T12:00:00.000000Z"
    assert _holder(leases) is None


def test_a_killed_run_s_lease_expires_and_is_taken_over_and_recorded() -> None:
    leases = Leases()
    _held_by(leases, "gone/9", operation="helm upgrade", ago=400, duration=360)
    guard = _guard(leases)
    with guard.held("helm upgrade", 300, DEPLOYED, lambda: DEPLOYED):
        lease = leases.items[NAME]
        assert lease["spec"]["holderIdentity"] == "me/1" and lease["spec"]["leaseTransitions"] == 1
        assert lease["metadata"]["annotations"]["lifecycle.openstack.org/taken-over-from"].startswith(
            "gone/9 (helm upgrade), not renewed since ")
    (warning,) = guard.warnings
    assert warning.startswith("release svc: Lease lcm-helm-svc taken over from gone/9, which stopped renewing it")


def test_a_release_changed_between_the_check_and_the_hold_is_not_acted_on() -> None:
    leases = Leases()
    moved = DEPLOYED + [{"revision": 2, "status": "deployed"}]
    with pytest.raises(KubeError) as err:
        with _guard(leases).held("helm upgrade", 300, DEPLOYED, lambda: moved):
            pytest.fail("the command ran")
    assert str(err.value) == ("another operation changed release svc while this run prepared its helm upgrade: "
                              "it was revision 1 (deployed), it is now revision 2 (deployed). Nothing was changed; "
                              "run again to act on what it is now")
    assert _holder(leases) is None


def test_a_namespace_not_there_yet_runs_the_command_without_a_lease() -> None:
    """create_namespace: Helm creates it; there is no release there to guard."""
    leases = Leases()
    leases.refuse = error(NotFoundError, 404)
    ran = []
    with _guard(leases).held("helm install", 300, [], lambda: []):
        ran.append(True)
    assert ran and not leases.items


def test_the_lease_is_renewed_while_the_command_runs() -> None:
    leases = Leases()
    with _guard(leases, renew_every=0.02).held("helm upgrade", 300, DEPLOYED, lambda: DEPLOYED):
        first = leases.items[NAME]["spec"]["renewTime"]
        deadline = time.monotonic() + 5
        while leases.items[NAME]["spec"]["renewTime"] == first and time.monotonic() < deadline:
            time.sleep(0.01)
        assert leases.items[NAME]["spec"]["renewTime"] > first
    assert _holder(leases) is None


@pytest.mark.parametrize("holder, ago, other", [("awx-1/100", 3, True), ("awx-1/100", 500, False),
                                                ("me/1", 3, False)])
def test_a_pending_release_is_held_by_another_only_while_its_lease_lives(holder: str, ago: int, other: bool) -> None:
    leases = Leases()
    _held_by(leases, holder, ago=ago)
    found = _guard(leases).held_by_another([{"revision": 1, "status": "pending-install"}])
    if not other:
        assert found is None
        return
    assert found is not None and found.startswith("another operation holds release svc: awx-1/100 (helm install)")
    assert "(Lease lcm-helm-svc in ns); meanwhile the release is pending-install at revision 1. Nothing" in found


def test_a_lease_that_cannot_be_read_leaves_the_pending_message_as_it_was() -> None:
    leases = Leases()
    leases.refuse = error(ForbiddenError, 403)
    assert _guard(leases).held_by_another([{"revision": 1, "status": "pending-install"}]) is None


# -- helm_release with the guard --------------------------------------------------
class _Helm(Helm):
    """A fake helm (as in helm/test_cli.py) whose changing commands record who held the Lease."""
    leases: Leases
    seen: List[Any]

    def run(self, args: Sequence[str], check: bool = True, timeout: Optional[float] = None) -> Any:
        if args[0] in ("upgrade", "rollback", "uninstall"):
            self.seen.append((args[0], _holder(self.leases)))
        return super().run(args, check=check, timeout=timeout)


def _manager(tmp_path: Path, leases: Leases, history: List[Dict[str, Any]], fail: bool = False,
             check: bool = False, **req: Any) -> ReleaseManager:
    script = fake_helm(tmp_path, "v3.22.0", history)
    if fail:
        script.write_text(script.read_text().replace('elif args[:1] == ["rollback"]:', '''elif args[:1] == ["upgrade"]:
    print("Error: UPGRADE FAILED: timed out", file=sys.stderr)
    sys.exit(1)
elif args[:1] == ["rollback"]:'''))
    # The history is the script's: the release's storage records are read
    # from the cluster only for Helm's Secret and ConfigMap drivers (helm/records.py).
    cli = _Helm(str(script), env={"HELM_DRIVER": "sql"})
    cli.leases, cli.seen = leases, []
    manager = ReleaseManager(cli, ReleaseRequest(name="svc", namespace="ns", wait=False, **req), dyn=Dyn(leases),
                             check_mode=check)
    manager.guard.holder = "me/1"
    return manager


@pytest.mark.parametrize("state, history, command", [
    ("present", [], "upgrade"), ("present", DEPLOYED, "upgrade"),
    ("rolledback", DEPLOYED + [{"revision": 2, "status": "deployed"}], "rollback"),
    ("absent", DEPLOYED, "uninstall")])
def test_every_changing_command_runs_holding_the_lease(tmp_path: Path, state: str, history: List[Any],
                                                       command: str) -> None:
    leases = Leases()
    manager = _manager(tmp_path, leases, history, chart=str(tmp_path))
    getattr(manager, state)()
    assert manager.helm.seen == [(command, "me/1")]
    assert _holder(leases) is None


def test_check_mode_takes_no_lease(tmp_path: Path) -> None:
    leases = Leases()
    assert _manager(tmp_path, leases, DEPLOYED, check=True, chart=str(tmp_path)).present()["changed"] is True
    assert not leases.items


def test_a_failed_upgrade_gives_the_lease_back(tmp_path: Path) -> None:
    leases = Leases()
    with pytest.raises(HelmError, match="UPGRADE FAILED"):
        _manager(tmp_path, leases, DEPLOYED, fail=True, chart=str(tmp_path)).present()
    assert _holder(leases) is None


def test_a_second_install_while_the_first_holds_the_lease_changes_nothing(tmp_path: Path) -> None:
    """Both read an empty history; the first took the Lease before Helm wrote its record."""
    leases = Leases()
    _held_by(leases, "awx-1/100")
    manager = _manager(tmp_path, leases, [], chart=str(tmp_path))
    with pytest.raises(KubeError, match="^another operation holds release svc: awx-1/100 \\(helm install\\)"):
        manager.present()
    assert manager.helm.seen == []


@pytest.mark.parametrize("state", ["pending-install", "pending-upgrade", "pending-rollback"])
def test_a_pending_release_another_run_holds_is_running_not_stuck(tmp_path: Path, state: str) -> None:
    leases = Leases()
    _held_by(leases, "awx-1/100", operation="helm upgrade")
    history = [{"revision": 1, "status": state, "chart": "svc-0.1.0"}]
    with pytest.raises(HelmError) as err:
        _manager(tmp_path, leases, history, chart=str(tmp_path)).present()
    msg = str(err.value)
    assert msg.startswith("another operation holds release svc: awx-1/100 (helm upgrade) since ")
    assert f"meanwhile the release is {state} at revision 1. Nothing was changed. Wait for it to end" in msg
    assert "helm uninstall" not in msg and err.value.details["status"]["status"] == state


def test_a_pending_release_nobody_holds_did_not_finish(tmp_path: Path) -> None:
    leases = Leases()
    _held_by(leases, "gone/9", ago=1000)
    history = [{"revision": 1, "status": "pending-install", "chart": "svc-0.1.0"}]
    with pytest.raises(HelmError) as err:
        _manager(tmp_path, leases, history, chart=str(tmp_path)).present()
    assert str(err.value).startswith("release svc is pending-install at revision 1: an earlier operation did not "
                                     "finish (or is still running)")
    assert "`helm uninstall svc -n ns`" in str(err.value)
    assert _holder(leases) == "gone/9"  # a refusal takes nothing over
