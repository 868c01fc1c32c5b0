"""A release's jobs read from its chart, the objects Helm keeps, and an
uninstall that ends even when its hooks do not (Helm replaced by a script)."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any, Dict, List, Set, Tuple

import pytest
import yaml
from support.fake_leases import Leases

from ansible_collections.lcm.openstack.plugins.module_utils.helm import chart_jobs, keep as release_keep
from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import NotFoundError
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm, HelmError
from ansible_collections.lcm.openstack.plugins.module_utils.helm.release import ReleaseManager, ReleaseRequest
from support.paths import UNIT_FIXTURES

FIXTURES = UNIT_FIXTURES / "release"


def load(name: str) -> Any:
    return yaml.safe_load((FIXTURES / name).read_text())


def test_the_job_switches_are_the_charts_own_job_keys() -> None:
    switches = chart_jobs.job_switches(load("chart_values.yaml"))
    assert switches == ["job_bootstrap", "job_credential_cleanup", "job_credential_setup", "job_db_drop",
                        "job_db_init", "job_db_sync", "job_fernet_setup"]
    assert chart_jobs.jobs_off(switches)["manifests"] == {k: False for k in switches}
    assert chart_jobs.job_switches({"images": {}}) == [] and chart_jobs.jobs_off([]) == {}


def test_kept_objects_and_delete_hooks_are_told_apart() -> None:
    render = load("install_render.yaml")
    assert [str(r) for r in release_keep.kept(render)] == ["Secret/keystone-fernet-keys",
                                                           "Secret/keystone-credential-keys"]
    assert [str(r) for r in release_keep.delete_hooks(render)] == ["Job/keystone-credential-cleanup"]


def test_a_first_install_adopts_kept_hooks_by_running_without_hooks() -> None:
    render = load("install_render.yaml")
    kept = set(release_keep.kept(render))
    assert release_keep.plan_install(render, set()) == (False, [])
    no_hooks, adopted = release_keep.plan_install(render, kept)
    assert no_hooks is True and set(adopted) == kept
    # One of the two kept: the other is still an install hook to run.
    with pytest.raises(HelmError, match="Secret/keystone-credential-keys must still run"):
        release_keep.plan_install(render, {release_keep.ref(render[0])})


def test_kept_hooks_beside_a_hook_that_must_run_are_refused_naming_both() -> None:
    render = load("install_render.yaml") + [load("post_install_job.yaml")]
    with pytest.raises(HelmError) as exc:
        release_keep.plan_install(render, set(release_keep.kept(render)))
    message = str(exc.value)
    assert "Secret/keystone-fernet-keys, Secret/keystone-credential-keys exist already" in message
    assert "the install hooks Job/keystone-db-sync must still run" in message
    assert "Nothing was changed" in message


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
    manifest = yaml.safe_dump_all(load("install_render.yaml")[2:3] + load("install_render.yaml")[4:])
    hooks = yaml.safe_dump_all(load("install_render.yaml")[:2] + load("install_render.yaml")[3:4])
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
