"""plugins/module_utils/helm/cli.py: the Helm CLI wrapper, with Helm itself
replaced by a script that records its arguments (and so without a cluster).
The release logic on it: test_release.py."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Dict, List

import pytest
from support.fake_helm import fake_helm

from ansible_collections.lcm.openstack.plugins.module_utils.helm import cli as helm_mod
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm, HelmError, merge_values
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import Redactor


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


def test_helm_binary_resolution_names_both_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(HelmError, match=r"set the binary_path option \(alias helm_binary\) or the HELM_BIN "
                                        r"environment variable"):
        helm_mod.find_helm(None, {})


def test_the_version_of_a_binary_is_asked_once_per_process_and_again_once_it_is_replaced(tmp_path: Path) -> None:
    script = fake_helm(tmp_path, "v3.22.0", [])
    assert [Helm(str(script)).major for _run in range(3)] == [3, 3, 3]
    log = tmp_path / "calls.jsonl"
    assert [json.loads(line)[0] for line in log.read_text().splitlines()] == ["version"]
    fake_helm(tmp_path, "v4.0.10", [])  # another Helm in its place
    assert Helm(str(script)).major == 4
    assert [json.loads(line)[0] for line in log.read_text().splitlines()] == ["version", "version"]


# -- reads run together ----------------------------------------------------------------
def _script(tmp_path: Path, body: str) -> str:
    """A helm that runs `body` (Python, with `args` its arguments)."""
    script = tmp_path / "helm"
    script.write_text("#!/usr/bin/env python3\nimport os, sys, time\nargs = sys.argv[1:]\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_reads_run_together_at_once_and_answer_in_order(tmp_path: Path) -> None:
    """Each of the two waits for the other to have started (a FIFO opens only
    with both ends): run one after the other, the first would never end."""
    os.mkfifo(tmp_path / "meet")
    helm = Helm(_script(tmp_path, f"""
end = "w" if args[0] == "history" else "r"
with open({str(tmp_path / 'meet')!r}, end) as meet:
    if end == "w":
        meet.write("x" * 200000)
    else:
        seen = len(meet.read())
print(args[0] if end == "w" else f"{{args[0]}} read {{seen}}")
"""), timeout=20)
    history, status = helm.run_together([["history", "r"], ["status", "r"]])
    assert (history.rc, history.stdout, status.stdout) == (0, "history\n", "status read 200000\n")
    assert history.command[1:] == ["history", "r"] and status.command[1:] == ["status", "r"]


def test_the_work_given_for_meanwhile_runs_while_helm_runs(tmp_path: Path) -> None:
    """Helm here writes to a FIFO and cannot end before this process reads it:
    were `meanwhile` called after Helm ended, the call would time out."""
    os.mkfifo(tmp_path / "meet")
    helm = Helm(_script(tmp_path, f"""
with open({str(tmp_path / 'meet')!r}, "w") as meet:
    meet.write("made while helm ran")
print(args[0])
"""), timeout=20)
    seen: List[str] = []

    def meanwhile() -> None:
        with open(tmp_path / "meet", encoding="utf-8") as meet:
            seen.append(meet.read())
    (template,) = helm.run_together([["template", "r"]], meanwhile=meanwhile)
    assert (template.rc, template.stdout, seen) == (0, "template\n", ["made while helm ran"])


def test_output_larger_than_a_pipe_holds_is_read_whole(tmp_path: Path) -> None:
    helm = Helm(_script(tmp_path, 'sys.stdout.write(args[0] * 300000)\nsys.stderr.write("e" * 300000)\n'))
    (result,) = helm.run_together([["template"]])
    assert len(result.stdout) == 8 * 300000 and len(result.stderr) == 300000


def test_a_read_whose_connection_broke_runs_again_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(helm_mod.time, "sleep", lambda seconds: None)
    helm = Helm(_script(tmp_path, f"""
mark = {str(tmp_path)!r} + "/" + args[0]
if args[0] == "history" and not os.path.exists(mark):
    open(mark, "w").close()
    sys.exit('Error: Get "https://10.0.0.1/api/v1/secrets": connection reset by peer')
if args[0] == "template":
    sys.exit("Error: parse error in values.yaml")
print(args[0])
"""))
    history, template = helm.run_together([["history", "r"], ["template", "r"]])
    assert (history.rc, history.stdout) == (0, "history\n")
    assert template.rc == 1 and "parse error" in template.stderr  # not a read: not run again


def test_reads_that_do_not_end_in_time_are_stopped_all(tmp_path: Path) -> None:
    helm = Helm(_script(tmp_path, f"open({str(tmp_path)!r} + '/' + args[0], 'w').write(str(os.getpid()))\n"
                                  "time.sleep(60)\n"), timeout=1)
    with pytest.raises(HelmError, match="^helm history did not finish in 1s"):
        helm.run_together([["history", "r"], ["status", "r"]])
    for name in ("history", "status"):
        with pytest.raises(ProcessLookupError):  # killed, and reaped
            os.kill(int((tmp_path / name).read_text()), 0)


def test_the_end_of_helm_is_waited_for_not_polled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Popen.wait(timeout) sleeps between looks at the process (up to 50 ms
    late for each Helm); the wait here is woken by the process's end, and
    sleeps never, whether Helm runs alone or beside others."""
    def no_sleep(seconds: float) -> None:
        raise AssertionError(f"slept {seconds} s waiting for helm")
    helm = Helm(_script(tmp_path, "time.sleep(0.3)\nprint(args[0])\n"), timeout=20)
    monkeypatch.setattr(helm_mod.time, "sleep", no_sleep)  # the time module: subprocess's too
    assert helm.run(["history", "r"]).stdout == "history\n"
    assert [r.stdout for r in helm.run_together([["history", "r"], ["status", "r"]])] == ["history\n", "status\n"]
