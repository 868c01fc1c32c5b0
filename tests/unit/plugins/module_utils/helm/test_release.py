"""plugins/module_utils/helm/release.py: the decisions of a release brought to
a state, on a Helm that answers from a release it keeps (history, manifest,
values, chart, test hooks) and logs its calls: what makes an install, an
upgrade or nothing, the command each runs with, check mode running nothing,
a rollback's target, what a failed upgrade or test says. Some tests use a
helm script that prints a canned history (support/fake_helm.py); some a
cluster client, made only when a change needs it (never for a no-op).
(The Lease around changing commands: test_lease.py; a release left pending
by a broken connection: test_interrupted.py; what counts as a change:
test_drift.py; an uninstall hung in its hooks: test_removal.py and
test_keep.py; on a real cluster: tests/integration/test_helm_release.py.)"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError
from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import NotFoundError
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import MASK
from ansible_collections.lcm.openstack.plugins.module_utils.helm import settle
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm, HelmError, Result
from ansible_collections.lcm.openstack.plugins.module_utils.helm.release import ReleaseManager, ReleaseRequest
from support.fake_helm import fake_helm, start_at_once
from support.fake_leases import Leases, error
from support.paths import UNIT_FIXTURES

DEPLOYED = [{"revision": 1, "status": "superseded", "chart": "keystone-0.1.0", "description": "Install complete"},
            {"revision": 2, "status": "deployed", "chart": "keystone-0.1.0", "description": "Upgrade complete"}]
ROLLED_BACK = DEPLOYED[:1] + [dict(DEPLOYED[1], status="superseded"),
                              {"revision": 3, "status": "deployed", "chart": "keystone-0.1.0",
                               "description": "Rollback to 1"}]
CHART = "openstack-helm/keystone"
SECRET = "a-long-admin-passw0rd"
VALUES = {"endpoints": {"identity": {"auth": {"admin": {"password": SECRET}}}}, "pod": {"replicas": {"api": 1}}}
MANIFEST = """---
# Source: keystone/templates/deployment-api.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: keystone-api
spec:
  replicas: 1
---
# Source: keystone/templates/configmap-bin.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: keystone-bin
data:
  db-sync.sh: keystone-manage db_sync
"""
FIXTURES = UNIT_FIXTURES / "release"
READ = ["history", "status", "template"]  # a present() reads and renders at once (helm/records.py)


def _fixture(name: str) -> Any:
    return yaml.safe_load((FIXTURES / name).read_text())


class _Cli(Helm):
    """Helm keeping one release: reads answer from it, a changing command
    moves its history as Helm would (or fails as `fail` says), and every
    call is logged with the values files it was given, read while they exist."""

    def __init__(self, history: List[Dict[str, Any]], version: str = "v3.19.0") -> None:
        super().__init__("helm", _version=version)
        self.releases = [dict(h) for h in history]
        self.manifest, self.rendered, self.hooks = MANIFEST, MANIFEST, ""
        self.values: Dict[str, Any] = dict(VALUES)
        self.chart, self.defaults = {"name": "keystone", "version": "0.1.0"}, ""
        self.status_hooks: List[Dict[str, Any]] = []
        # subcommand -> (stderr, the history Helm leaves)
        self.fail: Dict[str, Tuple[str, List[Dict[str, Any]]]] = {}
        self.ran: List[List[str]] = []
        self.values_given: List[Any] = []

    def _run_once(self, args: Sequence[str], timeout: Any) -> Result:
        args = list(args)
        self.ran.append(args)
        self.values_given += [yaml.safe_load(Path(args[i + 1]).read_text())
                              for i, a in enumerate(args) if a == "--values"]
        word = " ".join(args[:2]) if args[0] in ("get", "show") else args[0]
        if word in self.fail:
            stderr, self.releases = self.fail[word]
            return Result(["helm", *args], 1, "", stderr)
        if word == "status" and not self.releases:
            return Result(["helm", *args], 1, "", "Error: release: not found")
        out = {"history": lambda: json.dumps(self.releases), "get manifest": lambda: self.manifest,
               "get hooks": lambda: self.hooks, "get values": lambda: json.dumps(self.values),
               "show chart": lambda: yaml.safe_dump(self.chart), "show values": lambda: self.defaults,
               "template": lambda: self.rendered if "--no-hooks" in args else self.rendered + self.hooks,
               "status": self._status,
               "upgrade": lambda: self._revision("Install complete" if not self.releases else "Upgrade complete"),
               "rollback": lambda: self._revision(f"Rollback to {args[2]}"),
               "uninstall": self._uninstalled,
               "test": lambda: ""}[word]()
        return Result(["helm", *args], 0, out, "")

    _start = start_at_once

    def _status(self) -> str:
        """`helm status --output json` of the last revision: its manifest, values and hooks."""
        return json.dumps({"name": "keystone", "version": self.releases[-1]["revision"],
                           "info": {"status": self.releases[-1]["status"]}, "manifest": self.manifest,
                           "config": self.values, "hooks": self.status_hooks})

    def _revision(self, description: str) -> str:
        self.releases = [dict(h, status="superseded") if h["status"] == "deployed" else h for h in self.releases]
        self.releases.append({"revision": len(self.releases) + 1, "status": "deployed", "chart": "keystone-0.1.0",
                              "description": description})
        return ""

    def _uninstalled(self) -> str:
        self.releases[-1] = dict(self.releases[-1], status="uninstalled", description="Uninstallation complete")
        return ""

    def subcommands(self) -> List[str]:
        return [a[0] for a in self.ran]

    def the(self, subcommand: str) -> List[str]:
        (args,) = [a for a in self.ran if a[0] == subcommand]
        return args


def _manager(cli: Helm, check: bool = False, dyn: Any = None, **req: Any) -> ReleaseManager:
    given = dict(dict(name="keystone", namespace="openstack", wait=False), **req)
    return ReleaseManager(cli, ReleaseRequest(**given), dyn=dyn, check_mode=check)


def _present(cli: _Cli, check: bool = False, dyn: Any = None, **req: Any) -> Dict[str, Any]:
    return _manager(cli, check, dyn, **dict(dict(chart=CHART, values=VALUES), **req)).present()


class _Objects:
    """A dynamic-client resource over the namespace's objects, each get recorded."""

    def __init__(self, cluster: "_Cluster", kind: str) -> None:
        self.cluster, self.kind = cluster, kind

    def get(self, name: Optional[str] = None, namespace: str = "", label_selector: Optional[str] = None,
            **kwargs: Any) -> Any:
        self.cluster.calls.append(("get", self.kind, name or label_selector or ""))
        if (self.kind, name) not in self.cluster.objects:
            raise error(NotFoundError, 404)
        return {"kind": self.kind, "metadata": {"name": name, "namespace": namespace}}


class _Cluster:
    """The namespace's objects, and the release's Lease (which the manager holds around a change)."""

    def __init__(self, objects: Set[Tuple[str, str]]) -> None:
        self.resources, self.objects, self.leases = self, objects, Leases()
        self.calls: List[Tuple[str, str, str]] = []

    def get(self, api_version: str, kind: str) -> Any:
        return self.leases if kind == "Lease" else _Objects(self, kind)


@pytest.fixture
def waited(monkeypatch: pytest.MonkeyPatch) -> List[List[int]]:
    """The waits for the release's objects, each with the revisions of the history it was given."""
    seen: List[List[int]] = []

    def wait_for_release(dyn: Any, helm: Helm, req: Any, history: List[Dict[str, Any]]) -> None:
        seen.append([h["revision"] for h in history])
    monkeypatch.setattr(settle, "wait_for_release", wait_for_release)
    return seen


def _subcommands(tmp_path: Path) -> List[str]:
    return [c[0] for c in _calls(tmp_path)]


def _calls(tmp_path: Path) -> List[List[str]]:
    log = tmp_path / "calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def _scripted(tmp_path: Path, history: List[Dict[str, Any]], check: bool = False, **req: Any) -> ReleaseManager:
    return _manager(Helm(str(fake_helm(tmp_path, "v3.19.0", history))), check, **req)


SVC_HISTORY = [
    {"revision": 1, "status": "superseded", "chart": "svc-0.1.0", "app_version": "1", "description": "Install complete"},
    {"revision": 2, "status": "deployed", "chart": "svc-0.2.0", "app_version": "2", "description": "Upgrade complete"},
]


def _svc(tmp_path: Path, history: List[Dict[str, Any]], check: bool = False, **req: Any) -> ReleaseManager:
    """Release svc in ns on the canned-history helm script."""
    cli = Helm(str(fake_helm(tmp_path, "v3.22.0", history)))
    return ReleaseManager(cli, ReleaseRequest(name="svc", namespace="ns", **req), dyn=None, check_mode=check)


# -- present ---------------------------------------------------------------------
def test_a_first_install_runs_upgrade_install_with_the_values_in_a_file_never_on_the_command_line() -> None:
    cli = _Cli([])
    out = _present(cli, chart_version="0.1.0", create_namespace=True)
    upgrade = cli.the("upgrade")
    assert upgrade[:9] == ["upgrade", "keystone", CHART, "--install", "--namespace", "openstack", "--timeout", "300s",
                           "--values"]
    assert upgrade[10:] == ["--version", "0.1.0", "--create-namespace"]
    assert cli.values_given[-1] == VALUES and not any(SECRET in a for a in upgrade)
    assert (out["changed"], out["operation"]) == (True, "install")
    assert out["status"]["revision"] == 1 and out["status"]["status"] == "deployed"  # read again after the install
    assert out["command"] == " ".join(["helm", *upgrade])
    assert out["_diff"]["before"] == "" and "keystone-api" in out["_diff"]["after"]
    assert ["template", "keystone", CHART, "--namespace", "openstack"] == cli.the("template")[:5]
    assert cli.the("template")[-4:] == ["--no-hooks", "--skip-tests", "--version", "0.1.0"]


def test_a_release_that_is_what_is_asked_is_left_alone() -> None:
    cli = _Cli(DEPLOYED)
    out = _present(cli)
    assert (out["changed"], out["operation"], out["command"]) == (False, "none", "")
    assert out["status"]["revision"] == 2 and [h["revision"] for h in out["history"]] == [1, 2]
    assert out["_diff"]["before"] == out["_diff"]["after"]
    assert "upgrade" not in cli.subcommands()


@pytest.mark.parametrize("change", ["manifest", "values", "chart", "failed"])
def test_a_release_that_differs_is_upgraded(change: str) -> None:
    cli = _Cli(DEPLOYED)
    history = DEPLOYED
    if change == "manifest":
        cli.rendered = MANIFEST.replace("replicas: 1", "replicas: 3")
    elif change == "values":
        cli.values = {"pod": {"replicas": {"api": 1}}}
    elif change == "chart":
        cli.chart = {"name": "keystone", "version": "0.2.0"}
    else:
        history = DEPLOYED[:1] + [dict(DEPLOYED[1], status="failed")]
        cli.releases = history
    out = _present(cli)
    assert (out["changed"], out["operation"]) == (True, "upgrade")
    assert cli.subcommands().count("upgrade") == 1 and out["status"]["revision"] == 3
    if change == "manifest":
        assert "replicas: 1" in out["_diff"]["before"] and "replicas: 3" in out["_diff"]["after"]


def test_check_mode_says_what_would_be_done_and_changes_nothing() -> None:
    cli = _Cli(DEPLOYED)
    cli.rendered = MANIFEST.replace("replicas: 1", "replicas: 3")
    out = _present(cli, check=True)
    assert (out["changed"], out["operation"], out["status"]["revision"]) == (True, "upgrade", 2)
    assert "replicas: 3" in out["_diff"]["after"]
    first = _Cli([])
    assert _present(first, check=True)["operation"] == "install" and first.releases == []
    assert "upgrade" not in cli.subcommands() + first.subcommands()


@pytest.mark.parametrize("version, req, tail", [
    ("v3.19.0", dict(force=True, atomic=True, helm_wait=True, history_max=5, description="nightly", reset_values=True),
     ["--history-max", "5", "--description", "nightly", "--reset-values", "--force", "--atomic"]),
    ("v3.19.0", dict(helm_wait=True, reuse_values=True, server_side=False), ["--reuse-values", "--wait"]),
    ("v4.0.1", dict(force=True, atomic=True, server_side=True),
     ["--force-replace", "--server-side=true", "--rollback-on-failure"]),
    ("v4.0.1", dict(helm_wait=True, server_side=False), ["--server-side=false", "--wait=watcher"]),
])
def test_the_upgrade_carries_the_options_asked_in_the_words_of_the_helm_major(version: str, req: Dict[str, Any],
                                                                              tail: List[str]) -> None:
    cli = _Cli(DEPLOYED, version)
    cli.rendered = MANIFEST.replace("replicas: 1", "replicas: 3")
    _present(cli, values={}, **req)
    assert cli.the("upgrade") == ["upgrade", "keystone", CHART, "--install", "--namespace", "openstack",
                                  "--timeout", "300s", *tail]


def test_server_side_apply_on_helm_3_is_refused_before_anything_changes() -> None:
    cli = _Cli(DEPLOYED)
    cli.rendered = MANIFEST.replace("replicas: 1", "replicas: 3")
    with pytest.raises(HelmError, match="^Helm 3 has no server-side mode; use Helm 4, or leave server_side unset$"):
        _present(cli, server_side=True)
    assert "upgrade" not in cli.subcommands() and cli.releases == DEPLOYED


def test_with_disable_jobs_every_job_of_the_chart_is_switched_off_over_the_values_given() -> None:
    cli = _Cli([])
    cli.defaults = (FIXTURES / "chart_values.yaml").read_text()
    out = _present(cli, chart_version="0.1.0", disable_jobs=True,
                   values={"manifests": {"job_db_sync": True, "deployment_api": False}})
    switches = ["job_bootstrap", "job_credential_cleanup", "job_credential_setup", "job_db_drop", "job_db_init",
                "job_db_sync", "job_fernet_setup"]
    assert out["disabled_jobs"] == switches
    assert cli.the("show")[:5] == ["show", "values", CHART, "--version", "0.1.0"]
    assert cli.values_given[-1] == {"manifests": dict({s: False for s in switches}, deployment_api=False)}


def test_a_chart_on_disk_of_another_version_than_asked_is_refused(tmp_path: Path) -> None:
    cli = _Cli([])
    with pytest.raises(HelmError) as err:
        _present(cli, chart=str(tmp_path), chart_version="0.2.0")
    assert str(err.value) == (f"chart {tmp_path} is version 0.1.0, not 0.2.0; fix chart_version, "
                              "or point chart at that version")
    assert "template" not in cli.subcommands() and "upgrade" not in cli.subcommands()
    assert _present(cli, chart=str(tmp_path), chart_version="v0.1.0")["operation"] == "install"


def test_a_chart_that_cannot_be_rendered_says_why_and_changes_nothing() -> None:
    cli = _Cli(DEPLOYED)
    cli.fail["template"] = ('Error: template: keystone/templates/deployment-api.yaml:12: function "oops" not defined\n',
                            DEPLOYED)
    with pytest.raises(HelmError, match=(r'^chart openstack-helm/keystone version 0.1.0 cannot be rendered: Error: '
                                         r'template: keystone/templates/deployment-api.yaml:12: function "oops"')):
        _present(cli, chart_version="0.1.0")
    assert "upgrade" not in cli.subcommands()


def test_a_failed_upgrade_says_what_helm_said_masked_with_the_release_as_helm_left_it() -> None:
    cli = _Cli(DEPLOYED)
    cli.rendered = MANIFEST.replace("replicas: 1", "replicas: 3")
    left = DEPLOYED + [{"revision": 3, "status": "failed", "chart": "keystone-0.1.0", "description": "failed"}]
    cli.fail["upgrade"] = (f"Error: UPGRADE FAILED: cannot log in as admin:{SECRET}\n", left)
    with pytest.raises(HelmError) as err:
        _present(cli)
    assert str(err.value) == f"helm upgrade of keystone failed: UPGRADE FAILED: cannot log in as admin:{MASK}"
    assert err.value.details["status"]["revision"] == 3 and err.value.details["status"]["status"] == "failed"
    assert [h["revision"] for h in err.value.details["history"]] == [1, 2, 3]
    assert SECRET not in json.dumps(err.value.details)


def test_an_atomic_upgrade_helm_rolled_back_says_where_the_release_is_now() -> None:
    cli = _Cli(DEPLOYED)
    cli.rendered = MANIFEST.replace("replicas: 1", "replicas: 3")
    left = [dict(DEPLOYED[0]), dict(DEPLOYED[1], status="superseded"),
            {"revision": 3, "status": "failed", "chart": "keystone-0.2.0", "description": "Upgrade failed"},
            {"revision": 4, "status": "deployed", "chart": "keystone-0.1.0", "description": "Rollback to 2"}]
    cli.fail["upgrade"] = ("Error: UPGRADE FAILED: release keystone failed, and has been rolled back due to atomic "
                           "being set: timed out waiting for the condition\n", left)
    with pytest.raises(HelmError) as err:
        _present(cli, atomic=True)
    assert str(err.value).startswith("upgrade of keystone failed and Helm rolled it back (now revision 4, "
                                     "keystone-0.1.0): helm upgrade of keystone failed: UPGRADE FAILED: ")
    assert err.value.details["status"]["revision"] == 4


def test_an_atomic_upgrade_whose_rollback_failed_too_is_not_said_to_be_rolled_back() -> None:
    cli = _Cli(DEPLOYED)
    cli.rendered = MANIFEST.replace("replicas: 1", "replicas: 3")
    left = [dict(DEPLOYED[0]), dict(DEPLOYED[1], status="superseded"),
            {"revision": 3, "status": "failed", "chart": "keystone-0.2.0", "description": "Upgrade failed"},
            {"revision": 4, "status": "failed", "chart": "keystone-0.1.0", "description": "Rollback to 2 failed"}]
    cli.fail["upgrade"] = ("Error: UPGRADE FAILED: an error occurred while rolling back the release: timed out\n", left)
    with pytest.raises(HelmError, match="^helm upgrade of keystone failed: UPGRADE FAILED: an error occurred") as err:
        _present(cli, atomic=True)
    assert err.value.details["status"]["status"] == "failed"


def test_a_failed_atomic_first_install_is_not_said_to_be_rolled_back() -> None:
    cli = _Cli([])
    cli.fail["upgrade"] = ("Error: INSTALLATION FAILED: release keystone failed, and has been uninstalled due to "
                           "atomic being set: timed out waiting for the condition\n", [])
    with pytest.raises(HelmError, match="^helm install of keystone failed: INSTALLATION FAILED: ") as err:
        _present(cli, atomic=True)
    assert err.value.details["status"] == {} and err.value.details["history"] == []


def test_the_objects_are_waited_for_after_a_change_only(waited: List[List[int]]) -> None:
    cli = _Cli(DEPLOYED)
    cluster = _Cluster(set())
    assert _present(cli, dyn=cluster, wait=True)["operation"] == "none"
    assert waited == []
    cli.rendered = MANIFEST.replace("replicas: 1", "replicas: 3")
    assert _present(cli, dyn=cluster, wait=True)["operation"] == "upgrade"
    assert waited == [[1, 2, 3]]  # on the history read after the upgrade


def test_a_first_install_adopts_the_kept_hooks_an_earlier_install_left_by_running_without_hooks() -> None:
    render = _fixture("install_render.yaml")
    cli = _Cli([])
    cli.rendered = yaml.safe_dump_all([o for o in render if "annotations" not in o["metadata"]])
    cli.hooks = "---\n" + yaml.safe_dump_all(render[:2])
    cluster = _Cluster({("Secret", "keystone-fernet-keys"), ("Secret", "keystone-credential-keys")})
    out = _present(cli, dyn=cluster)
    assert "--no-hooks" in cli.the("upgrade")
    assert out["adopted"] == ["Secret/keystone-fernet-keys", "Secret/keystone-credential-keys"]
    assert ("get", "Secret", "keystone-fernet-keys") in cluster.calls
    # nothing kept is there: the hooks run
    fresh = _Cli([])
    fresh.hooks = cli.hooks
    out = _present(fresh, dyn=_Cluster(set()))
    assert "--no-hooks" not in fresh.the("upgrade") and "adopted" not in out


def test_kept_hooks_beside_an_install_hook_that_must_run_refuse_the_install() -> None:
    render = _fixture("install_render.yaml")
    cli = _Cli([])
    cli.hooks = "---\n" + yaml.safe_dump_all(render[:2] + [_fixture("post_install_job.yaml")])
    cluster = _Cluster({("Secret", "keystone-fernet-keys"), ("Secret", "keystone-credential-keys")})
    with pytest.raises(HelmError, match="the install hooks Job/keystone-db-sync must still run"):
        _present(cli, dyn=cluster)
    assert "upgrade" not in cli.subcommands() and not cluster.leases.items


def test_a_pending_release_is_refused_before_anything_is_upgraded_or_rolled_back() -> None:
    pending = DEPLOYED[:1] + [dict(DEPLOYED[1], status="pending-upgrade")]
    for state, read in (("present", READ), ("rolledback", ["history"])):
        cli = _Cli(pending)
        with pytest.raises(HelmError, match="^release keystone is pending-upgrade at revision 2: ") as err:
            getattr(_manager(cli, chart=CHART), state)()
        assert err.value.details["status"]["status"] == "pending-upgrade"
        assert cli.subcommands() == read


def test_present_needs_a_chart(tmp_path: Path) -> None:
    with pytest.raises(HelmError, match="chart is required for state=present"):
        _manager(Helm(str(fake_helm(tmp_path, "v3.19.0", DEPLOYED)))).present()


@pytest.mark.parametrize("state", ["pending-upgrade", "pending-install", "pending-rollback"])
def test_a_pending_release_is_refused_with_the_command_that_clears_it(tmp_path: Path, state: str) -> None:
    history = [SVC_HISTORY[0], dict(SVC_HISTORY[1], status=state)]
    with pytest.raises(HelmError) as exc:
        _svc(tmp_path, history, chart="/c").present()
    assert str(exc.value).startswith(f"release svc is {state} at revision 2")
    assert "`helm rollback svc 1 -n ns`" in str(exc.value)
    ran = [c[0] for c in _calls(tmp_path)]
    assert ran[0] == "version" and sorted(ran[1:]) == sorted(READ)  # the reads, run at once: nothing else


def test_a_pending_first_install_is_cleared_by_uninstall(tmp_path: Path) -> None:
    history = [dict(SVC_HISTORY[0], status="pending-install")]
    with pytest.raises(HelmError, match="`helm uninstall svc -n ns`"):
        _svc(tmp_path, history, chart="/c").present()


def _failing_install_helm(tmp_path: Path) -> Path:
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
    cli = Helm(str(_failing_install_helm(tmp_path)))
    req = ReleaseRequest(name="svc", namespace="ns", chart=str(chart), values={"manifests": {"job_db_sync": True}},
                         disable_jobs=True)
    with pytest.raises(HelmError, match="^helm install of svc failed: INSTALLATION FAILED: quota exceeded"):
        ReleaseManager(cli, req).present()
    # The chart's own switch is off, over the values given.
    assert req.values == {"manifests": {"job_db_sync": False}}
    (upgrade,) = [c for c in _calls(tmp_path) if c[0] == "upgrade"]
    assert "--no-hooks" not in upgrade


# -- present on the release as Helm's storage holds it ------------------------------------
def _chart_on_disk(tmp_path: Path, version: str = "0.1.0", archive: bool = False) -> str:
    """The keystone chart on disk, as a directory or a packaged archive."""
    chart = tmp_path / "keystone"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: keystone\nversion: {version}\nappVersion: '2025.1'\n")
    (chart / "values.yaml").write_text((FIXTURES / "chart_values.yaml").read_text())
    if not archive:
        return str(chart)
    with tarfile.open(tmp_path / f"keystone-{version}.tgz", "w:gz") as packed:
        packed.add(chart, arcname="keystone")
    return str(tmp_path / f"keystone-{version}.tgz")


def _connected(cli: _Cli, cluster: Any, **req: Any) -> Tuple[Dict[str, Any], List[int]]:
    """present() with a client made only when asked for; and how often it was made."""
    made: List[int] = []

    def connect() -> Any:
        made.append(1)
        return cluster
    given = dict(dict(name="keystone", namespace="openstack", wait=False, values=VALUES), **req)
    return ReleaseManager(cli, ReleaseRequest(**given), connect=connect).present(), made


@pytest.mark.parametrize("archive", [False, True])
def test_a_release_that_is_what_is_asked_is_read_and_rendered_at_once_and_no_client_is_made(
        tmp_path: Path, archive: bool) -> None:
    cli = _Cli([dict(h, app_version="2025.1", updated="2026-11-24T03:00:00.123456789Z") for h in DEPLOYED])
    out, made = _connected(cli, _Cluster(set()), chart=_chart_on_disk(tmp_path, archive=archive),
                           chart_version="0.1.0")
    assert (out["changed"], out["operation"], out["command"]) == (False, "none", "")
    assert cli.subcommands() == READ and made == []
    assert out["status"] == {"name": "keystone", "namespace": "openstack", "revision": 2, "chart": "keystone-0.1.0",
                             "app_version": "2025.1", "status": "deployed",
                             "updated": "2026-11-24T03:00:00.123456789Z", "description": "Upgrade complete"}
    assert [(h["revision"], h["status"]) for h in out["history"]] == [(1, "superseded"), (2, "deployed")]
    assert out["_diff"]["before"] == out["_diff"]["after"] and "keystone-api" in out["_diff"]["before"]


@pytest.mark.parametrize("driver", ["secret", "configmap", "sql"])
def test_under_any_storage_driver_helm_reads_the_release_itself(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, driver: str) -> None:
    monkeypatch.setenv("HELM_DRIVER", driver)
    cli = _Cli(DEPLOYED)
    out, made = _connected(cli, _Cluster(set()), chart=_chart_on_disk(tmp_path), chart_version="0.1.0")
    assert (out["changed"], out["operation"], out["status"]["revision"]) == (False, "none", 2)
    assert cli.subcommands() == READ and made == []


def test_under_the_memory_driver_nothing_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELM_DRIVER", "memory")
    cli = _Cli(DEPLOYED)
    with pytest.raises(InputError, match="^HELM_DRIVER=memory keeps a release only as long as one Helm process"):
        _connected(cli, None, chart=_chart_on_disk(tmp_path), chart_version="0.1.0")
    assert cli.subcommands() == []


def test_a_flow_release_with_its_jobs_off_that_is_what_is_asked_runs_only_the_reads(tmp_path: Path) -> None:
    cli = _Cli(DEPLOYED)
    switches = ["job_bootstrap", "job_credential_cleanup", "job_credential_setup", "job_db_drop", "job_db_init",
                "job_db_sync", "job_fernet_setup"]
    cli.values = dict(VALUES, manifests={s: False for s in switches})
    out = _present(cli, chart=_chart_on_disk(tmp_path), disable_jobs=True)
    assert (out["operation"], out["disabled_jobs"]) == ("none", switches)
    assert cli.subcommands() == READ  # the job switches from the chart's values.yaml, not `helm show values`


@pytest.mark.parametrize("change", ["values", "manifest", "chart", "failed"])
def test_a_revision_that_differs_is_upgraded_and_the_client_made_then(tmp_path: Path, change: str) -> None:
    cli = _Cli(DEPLOYED)
    if change == "values":
        cli.values = {"pod": {"replicas": {"api": 1}}}
    elif change == "manifest":
        cli.manifest = MANIFEST.replace("replicas: 1", "replicas: 3")
    elif change == "chart":
        cli.releases = DEPLOYED[:1] + [dict(DEPLOYED[1], chart="keystone-0.0.9")]
    else:
        cli.releases = DEPLOYED[:1] + [dict(DEPLOYED[1], status="failed")]
    out, made = _connected(cli, _Cluster(set()), chart=_chart_on_disk(tmp_path))
    assert (out["changed"], out["operation"], out["status"]["revision"]) == (True, "upgrade", 3)
    # the history read again by the Lease's check and after the upgrade
    assert cli.subcommands() == [*READ, "history", "upgrade", "history"] and made == [1]
    if change == "manifest":
        assert "replicas: 3" in out["_diff"]["before"] and "replicas: 1" in out["_diff"]["after"]


class _Moving(_Cli):
    """A release another Helm writes while it is read: `helm status` answers
    with the revision after the history's, `moves` times."""

    def __init__(self, moves: int) -> None:
        super().__init__(DEPLOYED)
        self.moves = moves

    def _status(self) -> str:
        if self.moves:
            self.moves -= 1
            return json.dumps({"version": self.releases[-1]["revision"] + 1, "manifest": "", "config": {}})
        return super()._status()


def test_a_history_and_status_of_two_revisions_are_read_again_without_the_render(tmp_path: Path) -> None:
    cli = _Moving(moves=1)
    out = _present(cli, chart=_chart_on_disk(tmp_path))
    assert out["operation"] == "none" and cli.subcommands() == [*READ, "history", "status"]


def test_a_release_that_keeps_changing_while_it_is_read_is_not_decided_on(tmp_path: Path) -> None:
    cli = _Moving(moves=3)
    with pytest.raises(HelmError, match="^release keystone in namespace openstack changed 3 times while it was "
                                        "read: another Helm command is changing it; run again when it is done"):
        _present(cli, chart=_chart_on_disk(tmp_path))
    assert "upgrade" not in cli.subcommands()


@pytest.mark.parametrize("archive", [False, True])
def test_a_chart_on_disk_of_another_version_is_refused_from_its_chart_yaml(tmp_path: Path, archive: bool) -> None:
    cli = _Cli([])
    chart = _chart_on_disk(tmp_path, "0.1.0", archive)
    with pytest.raises(HelmError) as err:
        _present(cli, chart=chart, chart_version="0.2.0")
    assert str(err.value) == (f"chart {chart} is version 0.1.0, not 0.2.0; fix chart_version, "
                              "or point chart at that version")
    assert cli.subcommands() == []  # refused before any read; no `helm show chart`
    assert _present(cli, chart=chart, chart_version="v0.1.0")["operation"] == "install"
    assert "show" not in cli.subcommands()


def test_a_credential_of_the_stored_revision_is_masked_in_what_a_failed_upgrade_says(tmp_path: Path) -> None:
    old = "an-older-admin-passw0rd"
    cli = _Cli(DEPLOYED)
    cli.values = {"endpoints": {"identity": {"auth": {"admin": {"password": old}}}}, "pod": {"replicas": {"api": 1}}}
    cli.fail["upgrade"] = (f"Error: UPGRADE FAILED: admin:{old} was refused\n", DEPLOYED)
    with pytest.raises(HelmError) as err:
        _present(cli, dyn=_Cluster(set()), chart=_chart_on_disk(tmp_path))
    assert str(err.value) == f"helm upgrade of keystone failed: UPGRADE FAILED: admin:{MASK} was refused"
    assert old not in json.dumps(err.value.details)


# -- absent ----------------------------------------------------------------------
def test_a_release_that_is_not_there_is_absent_already(tmp_path: Path) -> None:
    out = _scripted(tmp_path, []).absent()
    assert out["changed"] is False and _subcommands(tmp_path) == ["version", "history"]
    cli = _Cli(DEPLOYED[:1] + [dict(DEPLOYED[1], status="uninstalled")])
    assert _manager(cli).absent()["changed"] is False and "uninstall" not in cli.subcommands()


def test_check_mode_says_an_uninstall_would_happen_and_runs_none(tmp_path: Path) -> None:
    out = _scripted(tmp_path, DEPLOYED, check=True).absent()
    assert out["changed"] is True and "uninstall" not in _subcommands(tmp_path)


def test_an_uninstall_returns_the_release_as_it_is_after_and_what_helm_kept() -> None:
    cli = _Cli(DEPLOYED)
    cli.manifest = yaml.safe_dump_all(_fixture("install_render.yaml")[:3])
    out = _manager(cli, keep_history=True, timeout=60).absent()
    assert cli.the("uninstall") == ["uninstall", "keystone", "--namespace", "openstack", "--timeout", "60s",
                                    "--keep-history"]
    assert (out["changed"], out["operation"], out["status"]["status"]) == (True, "uninstall", "uninstalled")
    assert out["command"] == "helm uninstall keystone --namespace openstack --timeout 60s --keep-history"
    assert out["kept"] == ["Secret/keystone-fernet-keys", "Secret/keystone-credential-keys"]
    assert out["hooks_skipped"] is False and "msg" not in out


# -- rolledback ------------------------------------------------------------------
def test_nothing_to_roll_back_is_an_error_naming_the_release(tmp_path: Path) -> None:
    with pytest.raises(HelmError, match="release keystone does not exist in namespace openstack; there is nothing to roll back"):
        _scripted(tmp_path, []).rolledback()


def test_a_rerun_of_a_default_rollback_does_not_go_further_back(tmp_path: Path) -> None:
    out = _scripted(tmp_path, ROLLED_BACK).rolledback()
    assert out["changed"] is False and out["rolled_back_to"] == 1
    assert out["msg"] == "revision 3 is already a rollback to revision 1; give revision to roll back further"
    assert "rollback" not in _subcommands(tmp_path)


def test_a_default_rollback_returns_to_the_previous_deployed_revision_and_waits(waited: List[List[int]]) -> None:
    cli = _Cli(DEPLOYED)
    out = _manager(cli, dyn=_Cluster(set()), wait=True).rolledback()
    assert cli.the("rollback") == ["rollback", "keystone", "1", "--namespace", "openstack", "--timeout", "300s"]
    assert (out["changed"], out["operation"], out["rolled_back_to"]) == (True, "rollback", 1)
    assert out["status"]["revision"] == 3 and out["status"]["description"] == "Rollback to 1"
    assert waited == [[1, 2, 3]]


def test_an_explicit_revision_goes_back_further_than_a_rollback_did() -> None:
    cli = _Cli(ROLLED_BACK)
    out = _manager(cli, revision=2).rolledback()
    assert cli.the("rollback")[:3] == ["rollback", "keystone", "2"] and out["rolled_back_to"] == 2


@pytest.mark.parametrize("history, revision", [(DEPLOYED, 2), (ROLLED_BACK, 1)])
def test_a_release_at_the_revision_asked_already_is_left_alone(history: List[Dict[str, Any]], revision: int) -> None:
    cli = _Cli(history)
    out = _manager(cli, revision=revision).rolledback()
    assert (out["changed"], out["operation"], out["rolled_back_to"]) == (False, "none", revision)
    assert "rollback" not in cli.subcommands()


def test_a_revision_not_in_the_history_is_refused_naming_those_that_are() -> None:
    cli = _Cli(DEPLOYED)
    with pytest.raises(HelmError, match="^revision 7 of release keystone does not exist; its history holds "
                                        "revisions 1, 2$"):
        _manager(cli, revision=7).rolledback()
    assert "rollback" not in cli.subcommands()


def test_a_rollback_on_helm_4_carries_its_options_in_helm_4_words() -> None:
    cli = _Cli(DEPLOYED, "v4.0.1")
    _manager(cli, force=True, helm_wait=True, server_side=False, timeout=42).rolledback()
    assert cli.the("rollback") == ["rollback", "keystone", "1", "--namespace", "openstack", "--timeout", "42s",
                                   "--force-replace", "--server-side=false", "--wait=watcher"]


def test_check_mode_names_the_rollback_target_and_rolls_nothing_back() -> None:
    cli = _Cli(DEPLOYED)
    out = _manager(cli, check=True).rolledback()
    assert (out["changed"], out["operation"], out["rolled_back_to"], out["status"]["revision"]) == (
        True, "rollback", 1, 2)
    assert "rollback" not in cli.subcommands()


def test_a_failed_rollback_says_what_helm_said() -> None:
    cli = _Cli(DEPLOYED)
    cli.fail["rollback"] = ("Error: no ConfigMap with the name \"keystone-etc\" found\n", DEPLOYED)
    with pytest.raises(HelmError, match='^helm rollback failed: no ConfigMap with the name "keystone-etc" found$'):
        _manager(cli).rolledback()


def test_a_default_rollback_skips_the_revision_a_rollback_abandoned(tmp_path: Path) -> None:
    """1 -> 2 -> 3 (rolled back to 2 as 4) -> 5: the default target is 4, never 3."""
    history = [dict(h, status="superseded") for h in SVC_HISTORY] + [
        {"revision": 3, "status": "superseded", "chart": "svc-0.3.0", "description": "Upgrade complete"},
        {"revision": 4, "status": "superseded", "chart": "svc-0.2.0", "description": "Rollback to 2"},
        {"revision": 5, "status": "deployed", "chart": "svc-0.5.0", "description": "Upgrade complete"}]
    assert _svc(tmp_path, history, check=True).rolledback()["rolled_back_to"] == 4
    history[3]["status"] = "superseded"
    assert _svc(tmp_path, history[:4] + [dict(history[4], description="Rollback to 1")],
                check=True).rolledback()["changed"] is False


def test_a_default_rollback_of_a_rolled_back_release_changes_nothing(tmp_path: Path) -> None:
    """After 1 -> 2 -> 3 and a rollback to 2 (revision 4), a re-run is not a second rollback."""
    history = [dict(h, status="superseded") for h in SVC_HISTORY] + [
        {"revision": 3, "status": "superseded", "chart": "svc-0.3.0", "description": "Upgrade complete"},
        {"revision": 4, "status": "deployed", "chart": "svc-0.2.0", "description": "Rollback to 2"}]
    result = _svc(tmp_path, history).rolledback()
    assert result["changed"] is False and "give revision to roll back further" in result["msg"]
    assert not [c for c in _calls(tmp_path) if c[0] == "rollback"]
    assert _svc(tmp_path, history, revision=1, check=True).rolledback()["changed"] is True


def test_a_release_with_nothing_earlier_cannot_roll_back(tmp_path: Path) -> None:
    with pytest.raises(HelmError, match="no earlier deployed revision to roll back to; give revision"):
        _svc(tmp_path, SVC_HISTORY[1:]).rolledback()


# -- tested ----------------------------------------------------------------------
def _hook(name: str, phase: str, events: Optional[List[str]] = None) -> Dict[str, Any]:
    return {"name": name, "kind": "Pod", "events": events or ["test"],
            "last_run": {"phase": phase, "started_at": "2026-11-24T03:00:00Z", "completed_at": "2026-11-24T03:01:00Z"}}


def test_a_release_whose_tests_pass_is_tested_and_unchanged() -> None:
    cli = _Cli(DEPLOYED)
    cli.status_hooks = [_hook("keystone-test", "Succeeded"), _hook("keystone-db-init", "Succeeded", ["pre-install"])]
    out = _manager(cli, timeout=120).tested()
    assert cli.the("test") == ["test", "keystone", "--namespace", "openstack", "--timeout", "120s"]
    assert (out["changed"], out["operation"]) == (False, "test")
    assert [(t["name"], t["phase"]) for t in out["tests"]] == [("keystone-test", "Succeeded")]
    assert out["command"] == "helm test keystone --namespace openstack --timeout 120s"


def test_a_failed_or_unrun_test_fails_naming_each_with_its_phase() -> None:
    cli = _Cli(DEPLOYED)
    cli.status_hooks = [_hook("keystone-test", "Failed"), _hook("keystone-smoke", "")]
    cli.fail["test"] = ("Error: pod keystone-test failed\n", DEPLOYED)
    with pytest.raises(HelmError) as err:
        _manager(cli).tested()
    assert str(err.value) == "helm test keystone failed: keystone-test (Failed), keystone-smoke (not run)"
    assert err.value.details["stderr"] == "Error: pod keystone-test failed\n"
    assert [t["name"] for t in err.value.details["tests"]] == ["keystone-test", "keystone-smoke"]
    assert err.value.details["changed"] is False


def test_a_failed_helm_test_without_test_results_points_at_stderr() -> None:
    cli = _Cli(DEPLOYED)
    cli.fail["test"] = ("Error: timed out waiting for the condition\n", DEPLOYED)
    with pytest.raises(HelmError, match="^helm test keystone failed: see stderr$"):
        _manager(cli).tested()


def test_tests_need_a_release_and_check_mode_runs_none() -> None:
    with pytest.raises(HelmError, match="^release keystone does not exist in namespace openstack$"):
        _manager(_Cli([])).tested()
    cli = _Cli(DEPLOYED)
    out = _manager(cli, check=True).tested()
    assert (out["changed"], out["tests"], out["msg"]) == (False, [], "check mode: tests not run")
    assert "test" not in cli.subcommands()


# A hook Job that no manifests.job_* switch gates (as mariadb's exporter user job, under
# manifests.monitoring.prometheus), waiting for a job the release leaves to the install phase.
UNGATED_HOOK = """---
# Source: keystone/templates/monitoring/job-exporter-user.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: keystone-exporter-user
  annotations:
    helm.sh/hook: post-install,post-upgrade
spec:
  template:
    spec:
      initContainers:
        - name: init
          env:
            - {name: DEPENDENCY_JOBS, value: keystone-db-sync}
---
# Source: keystone/templates/pod-rally-test.yaml
apiVersion: v1
kind: Pod
metadata:
  name: keystone-test
  annotations:
    helm.sh/hook: test-success
"""


@pytest.mark.parametrize("history", [[], DEPLOYED], ids=["install", "upgrade"])
def test_a_hook_job_no_switch_turns_off_is_left_to_the_phases(history: List[Dict[str, Any]]) -> None:
    cli = _Cli(history)
    cli.defaults = (FIXTURES / "chart_values.yaml").read_text()
    cli.rendered = MANIFEST.replace("replicas: 1", "replicas: 2")
    cli.hooks = UNGATED_HOOK
    out = _present(cli, chart_version="0.1.0", disable_jobs=True)
    # Helm would wait for it while it waits for keystone-db-sync, which only the phase runs after Helm.
    assert out["hooks_left_to_phases"] == ["Job keystone-exporter-user"]
    assert "--no-hooks" in cli.the("upgrade")


def test_hooks_stay_with_helm_when_every_job_is_switched_off_or_the_phases_do_not_run_them() -> None:
    cli = _Cli(DEPLOYED)
    cli.rendered = MANIFEST.replace("replicas: 1", "replicas: 2")
    cli.hooks = UNGATED_HOOK.split("---\n# Source: keystone/templates/pod-rally-test.yaml", maxsplit=1)[0].replace(
        "kind: Job", "kind: ConfigMap")  # a hook, but no Job
    cli.defaults = (FIXTURES / "chart_values.yaml").read_text()
    out = _present(cli, chart_version="0.1.0", disable_jobs=True)
    assert "hooks_left_to_phases" not in out and "--no-hooks" not in cli.the("upgrade")
    cli = _Cli(DEPLOYED)
    cli.rendered, cli.hooks = MANIFEST.replace("replicas: 1", "replicas: 2"), UNGATED_HOOK
    out = _present(cli)  # without disable_jobs Helm runs the chart's jobs as the chart says
    assert "hooks_left_to_phases" not in out and "--no-hooks" not in cli.the("upgrade")
