"""The Helm CLI wrapper and the release logic, with Helm itself replaced by a
script that records its arguments (and so without a cluster)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any, Dict, List

import pytest
from support.fake_helm import fake_helm

from ansible_collections.lcm.openstack.plugins.module_utils.helm import cli as helm_mod
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm, HelmError, merge_values
from ansible_collections.lcm.openstack.plugins.module_utils.helm.release import ReleaseManager, ReleaseRequest
from ansible_collections.lcm.openstack.plugins.module_utils.helm.history import summary
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import Redactor


def calls(tmp_path: Path) -> List[List[str]]:
    path = tmp_path / "calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


HISTORY = [
    {"revision": 1, "status": "superseded", "chart": "svc-0.1.0", "app_version": "1", "description": "Install complete"},
    {"revision": 2, "status": "deployed", "chart": "svc-0.2.0", "app_version": "2", "description": "Upgrade complete"},
]


@pytest.mark.parametrize("version, flags", [
    ("v3.22.0", {"atomic": ["--atomic"], "force": ["--force"], "wait": ["--wait"]}),
    ("v4.3.1", {"atomic": ["--rollback-on-failure"], "force": ["--force-replace"], "wait": ["--wait=watcher"]}),
])
def test_flags_follow_the_helm_major(tmp_path: Path, version: str, flags: Dict[str, List[str]]) -> None:
    cli = Helm(str(fake_helm(tmp_path, version, [])))
    cli.check_version()
    assert {name: cli.flag(name) for name in flags} == flags


@pytest.mark.parametrize("version", ["v3.7.3", "v2.17.0", "v5.0.0"])
def test_unsupported_helm_versions_are_refused(tmp_path: Path, version: str) -> None:
    cli = Helm(str(fake_helm(tmp_path, version, [])))
    with pytest.raises(HelmError, match=f"helm {version} at .* is not supported"):
        cli.check_version()


def test_values_go_through_a_private_file_never_the_command_line(tmp_path: Path) -> None:
    cli = Helm(str(fake_helm(tmp_path, "v3.22.0", [])))
    with cli.values_args({"db": {"password": "hunter2-secret"}}, (),
                         [{"value": "a=b"}, {"value": "c=1", "value_type": "string"}]) as args:
        values_file = args[args.index("--values") + 1]
        assert stat.S_IMODE(os.stat(values_file).st_mode) == 0o600
        assert "hunter2-secret" in Path(values_file).read_text()
        assert args[-4:] == ["--set", "a=b", "--set-string", "c=1"]
        assert not any("hunter2" in a for a in args)
    assert not os.path.exists(values_file)


def test_an_unknown_set_value_type_is_refused(tmp_path: Path) -> None:
    cli = Helm(str(fake_helm(tmp_path, "v3.22.0", [])))
    with pytest.raises(HelmError, match="value_type 'yaml' is not one of raw, string, json, file, literal"):
        with cli.values_args({}, (), [{"value": "a=b", "value_type": "yaml"}]):
            pass


def test_helm_errors_are_redacted(tmp_path: Path) -> None:
    script = tmp_path / "helm"
    script.write_text("#!/bin/sh\necho 'Error: cannot log in as admin:hunter2-secret' >&2\nexit 1\n")
    script.chmod(0o755)
    redactor = Redactor()
    redactor.add("hunter2-secret")
    with pytest.raises(HelmError) as exc:
        Helm(str(script), redactor=redactor).run(["install", "x", "hunter2-secret"])
    assert str(exc.value) == "helm install failed: cannot log in as admin:********"
    assert "hunter2" not in json.dumps(exc.value.details)


def test_merge_values_layers_like_helm() -> None:
    base = {"a": {"b": 1, "c": [1, 2]}, "d": "x"}
    assert merge_values(base, {"a": {"c": [3]}, "e": None}) == {"a": {"b": 1, "c": [3]}, "d": "x", "e": None}
    assert base == {"a": {"b": 1, "c": [1, 2]}, "d": "x"}  # untouched


def test_summary_is_the_last_revision() -> None:
    assert summary("svc", "ns", HISTORY)["revision"] == 2
    assert summary("svc", "ns", []) == {}


def manager(tmp_path: Path, history: List[Dict[str, Any]], check: bool = False, **req: Any) -> ReleaseManager:
    cli = Helm(str(fake_helm(tmp_path, "v3.22.0", history)))
    return ReleaseManager(cli, ReleaseRequest(name="svc", namespace="ns", **req), dyn=None, check_mode=check)


def test_rollback_defaults_to_the_previous_deployed_revision(tmp_path: Path) -> None:
    result = manager(tmp_path, HISTORY, check=True).rolledback()
    assert (result["changed"], result["rolled_back_to"], result["operation"]) == (True, 1, "rollback")
    assert not [c for c in calls(tmp_path) if c[0] == "rollback"]  # check mode ran nothing


def test_rollback_runs_helm_rollback_with_the_target(tmp_path: Path) -> None:
    manager(tmp_path, HISTORY, revision=1, timeout=42).rolledback()
    (call,) = [c for c in calls(tmp_path) if c[0] == "rollback"]
    assert call == ["rollback", "svc", "1", "--namespace", "ns", "--timeout", "42s"]


def test_a_release_already_rolled_back_is_left_alone(tmp_path: Path) -> None:
    history = HISTORY + [{"revision": 3, "status": "deployed", "chart": "svc-0.1.0", "description": "Rollback to 1"}]
    history[1] = dict(history[1], status="superseded")
    assert manager(tmp_path, history, revision=1).rolledback()["changed"] is False


def test_a_default_rollback_skips_the_revision_a_rollback_abandoned(tmp_path: Path) -> None:
    """1 -> 2 -> 3 (rolled back to 2 as 4) -> 5: the default target is 4, never 3."""
    history = [dict(h, status="superseded") for h in HISTORY] + [
        {"revision": 3, "status": "superseded", "chart": "svc-0.3.0", "description": "Upgrade complete"},
        {"revision": 4, "status": "superseded", "chart": "svc-0.2.0", "description": "Rollback to 2"},
        {"revision": 5, "status": "deployed", "chart": "svc-0.5.0", "description": "Upgrade complete"}]
    assert manager(tmp_path, history, check=True).rolledback()["rolled_back_to"] == 4
    history[3]["status"] = "superseded"
    assert manager(tmp_path, history[:4] + [dict(history[4], description="Rollback to 1")],
                   check=True).rolledback()["changed"] is False


def test_a_default_rollback_of_a_rolled_back_release_changes_nothing(tmp_path: Path) -> None:
    """After 1 -> 2 -> 3 and a rollback to 2 (revision 4), a re-run is not a second rollback."""
    history = [dict(h, status="superseded") for h in HISTORY] + [
        {"revision": 3, "status": "superseded", "chart": "svc-0.3.0", "description": "Upgrade complete"},
        {"revision": 4, "status": "deployed", "chart": "svc-0.2.0", "description": "Rollback to 2"}]
    result = manager(tmp_path, history).rolledback()
    assert result["changed"] is False and "give revision to roll back further" in result["msg"]
    assert not [c for c in calls(tmp_path) if c[0] == "rollback"]
    assert manager(tmp_path, history, revision=1, check=True).rolledback()["changed"] is True


def test_a_release_with_nothing_earlier_cannot_roll_back(tmp_path: Path) -> None:
    with pytest.raises(HelmError, match="no earlier deployed revision to roll back to; give revision"):
        manager(tmp_path, HISTORY[1:]).rolledback()


@pytest.mark.parametrize("state", ["pending-upgrade", "pending-install", "pending-rollback"])
def test_a_pending_release_is_refused_with_the_command_that_clears_it(tmp_path: Path, state: str) -> None:
    history = [HISTORY[0], dict(HISTORY[1], status=state)]
    with pytest.raises(HelmError) as exc:
        manager(tmp_path, history, chart="/c").present()
    assert str(exc.value).startswith(f"release svc is {state} at revision 2")
    assert "`helm rollback svc 1 -n ns`" in str(exc.value)
    assert [c[0] for c in calls(tmp_path)] == ["version", "history"]  # nothing else ran


def test_a_pending_first_install_is_cleared_by_uninstall(tmp_path: Path) -> None:
    history = [dict(HISTORY[0], status="pending-install")]
    with pytest.raises(HelmError, match="`helm uninstall svc -n ns`"):
        manager(tmp_path, history, chart="/c").present()


def test_uninstall_of_a_missing_release_changes_nothing(tmp_path: Path) -> None:
    assert manager(tmp_path, []).absent()["changed"] is False
    assert [c[0] for c in calls(tmp_path)] == ["version", "history"]


def test_helm_binary_resolution_names_both_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(HelmError, match=r"set the binary_path option \(alias helm_binary\) or the HELM_BIN "
                                        r"environment variable"):
        helm_mod.find_helm(None, {})


def test_an_unchanged_rollback_still_says_where_the_release_returned_to(tmp_path: Path) -> None:
    history = [dict(HISTORY[0], status="superseded"), dict(HISTORY[1], status="superseded"),
               {"revision": 3, "status": "deployed", "chart": "svc-0.1.0", "description": "Rollback to 1"}]
    assert manager(tmp_path, history).rolledback()["rolled_back_to"] == 1
    assert manager(tmp_path, history, revision=1).rolledback()["rolled_back_to"] == 1


def failing_install_helm(tmp_path: Path) -> Path:
    """A helm with no release, whose chart renders one job switch, and whose upgrade --install fails."""
    script = fake_helm(tmp_path, "v3.22.0", [])
    script.write_text(script.read_text().replace('elif args[:1] == ["rollback"]:', '''elif args[:2] == ["show", "values"]:
    print("manifests:\\n  job_db_sync: true\\n  deployment_api: true\\n")
elif args[:1] == ["upgrade"]:
    print("Error: INSTALLATION FAILED: quota exceeded", file=sys.stderr)
    sys.exit(1)
elif args[:1] == ["rollback"]:'''))
    return script


def test_a_failed_first_install_is_called_an_install_and_jobs_are_switched_off(tmp_path: Path) -> None:
    chart = tmp_path / "chart"
    chart.mkdir()
    cli = Helm(str(failing_install_helm(tmp_path)))
    req = ReleaseRequest(name="svc", namespace="ns", chart=str(chart), values={"manifests": {"job_db_sync": True}},
                         disable_jobs=True)
    with pytest.raises(HelmError, match="^helm install of svc failed: INSTALLATION FAILED: quota exceeded"):
        ReleaseManager(cli, req).present()
    # The chart's own switch is off, over the values given.
    assert req.values == {"manifests": {"job_db_sync": False}}
    (upgrade,) = [c for c in calls(tmp_path) if c[0] == "upgrade"]
    assert "--no-hooks" not in upgrade
