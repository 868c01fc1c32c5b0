"""plugins/module_utils/phase/backup_step.py: the backup or restore Job a phase makes
from the mariadb chart's backup CronJob, on the real renders (the stock
keystone chart, which has no backup job, the example chart, which has its
own, and the mariadb chart's CronJob and scripts)."""

from __future__ import annotations

import base64
import copy
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.helm import render
from ansible_collections.lcm.openstack.plugins.module_utils.phase import backup_step, selection
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from support.paths import UNIT_FIXTURES

FIXTURES = UNIT_FIXTURES
REF = "keystone-2025-2-0a1b2c3d"
NS = "openstack"
NOVA = ["nova", "nova_cell0", "nova_cell1"]


def _docs(path: Path) -> List[Dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


CRONJOB = next(d for d in _docs(FIXTURES / "db_backup" / "mariadb-backup.out") if d["kind"] == "CronJob")
HOSTPATH = next(d for d in _docs(FIXTURES / "db_backup" / "mariadb-backup-hostpath.out") if d["kind"] == "CronJob")
SCRIPTS = next(d for d in _docs(FIXTURES / "db_backup" / "mariadb-bin-keys.yaml") if d["kind"] == "ConfigMap")


def _render(name: str) -> List[render.Rendered]:
    return render.parse_manifest((FIXTURES / name).read_text())


class _Cluster:
    """What the phase reads: the CronJob and its scripts ConfigMap, each read recorded."""

    def __init__(self, cronjob: Optional[Dict[str, Any]] = CRONJOB) -> None:
        self.objects = {("CronJob", "mariadb-backup"): cronjob, ("ConfigMap", "mariadb-bin"): SCRIPTS}
        self.reads: List[Tuple[str, str]] = []

    def get(self, api_version: str, kind: str, name: str) -> Optional[Dict[str, Any]]:
        self.reads.append((kind, name))
        found = self.objects.get((kind, name))
        return copy.deepcopy(found) if found else None


UPGRADE = {"backup_database": True, "backup": {"cronjob": "mariadb-backup"}}
RESTORE = {"restore_database": True, "backup_ref": REF,
           "backup": {"cronjob": "mariadb-backup", "namespace": NS, "database": "keystone"}}


def test_an_upgrade_of_the_stock_chart_backs_up_its_database_from_the_cronjob() -> None:
    rendered = _render("openstack_helm/keystone.out")
    planned, warnings = backup_step.plan("upgrade", UPGRADE, NS, REF, rendered, _Cluster().get)
    assert warnings == [] and planned is not None
    job = planned.rendered.obj
    assert (planned.rendered.kind, planned.rendered.name) == ("Job", f"{REF}-db-backup")
    assert planned.rendered.source == "cronjob:mariadb-backup"
    assert job["metadata"]["labels"]["lifecycle.openstack.org/database-step"] == "backup"
    assert _env(job)["LCM_DATABASES"] == "keystone" and _env(job)["BACK_UP_MODE"] == REF  # keystone-db-init's
    assert planned.source == {"cronjob": "mariadb-backup", "namespace": NS, "databases": ["keystone"]}
    assert backup_step.is_step(planned.rendered, "backup") and not backup_step.is_step(planned.rendered, "restore")


def test_the_backup_job_runs_after_the_config_and_before_db_sync() -> None:
    rendered = _render("openstack_helm/keystone.out")
    chosen = selection.select(rendered, "upgrade", "templates", None, NS)
    planned, _warnings = backup_step.plan("upgrade", UPGRADE, NS, REF, rendered, _Cluster().get)
    assert planned is not None
    objects = backup_step.joined(chosen, planned.rendered)
    waves = selection.waves(objects)
    index = next(i for i, w in enumerate(waves) if planned.rendered in w)
    assert waves[index] == [planned.rendered]  # a wave of its own
    assert all(r.kind in selection.CONFIG_KINDS for w in waves[:index] for r in w)
    later = [r.name for w in waves[index + 1:] for r in w]
    assert "keystone-db-sync" in later


def test_a_backup_timeout_bounds_the_job() -> None:
    options = dict(UPGRADE, backup_timeout=300)
    planned, _warnings = backup_step.plan("upgrade", options, NS, REF,
                                          _render("openstack_helm/keystone.out"), _Cluster().get)
    assert planned is not None and planned.rendered.obj["spec"]["activeDeadlineSeconds"] == 300


def test_a_chart_with_its_own_backup_job_keeps_it_and_the_cronjob_is_not_read() -> None:
    cluster = _Cluster()
    rendered = _render("phase/rendered_keystone.out")  # the example chart: job-db-backup and job-db-restore
    assert backup_step.plan("upgrade", UPGRADE, NS, REF, rendered, cluster.get) == (None, [])
    assert backup_step.plan("rollback", RESTORE, NS, REF, rendered, cluster.get) == (None, [])
    assert cluster.reads == []


@pytest.mark.parametrize("phase_type, options", [
    ("upgrade", {"backup_database": False, "backup": {"cronjob": "mariadb-backup"}}),
    ("upgrade", {"backup_database": True}),
    ("rollback", {"restore_database": False, "backup": {"cronjob": "mariadb-backup"}}),
    ("uninstall", {"purge_database": True, "backup": {"cronjob": "mariadb-backup"}}),
])
def test_nothing_is_made_unless_the_step_is_asked_with_a_cronjob(phase_type: str, options: Dict[str, Any]) -> None:
    cluster = _Cluster()
    assert backup_step.plan(phase_type, options, NS, REF, _render("openstack_helm/keystone.out"),
                            cluster.get) == (None, [])
    assert cluster.reads == []


def test_a_missing_cronjob_says_how_to_turn_it_on_or_go_without() -> None:
    with pytest.raises(PhaseError) as err:
        backup_step.plan("upgrade", UPGRADE, NS, REF, _render("openstack_helm/keystone.out"), _Cluster(None).get)
    msg = str(err.value)
    assert msg.startswith(f"upgrade.backup.cronjob mariadb-backup is not in namespace {NS}")
    for text in ("manifests.cron_job_mariadb_backup", "conf.backup.enabled", "manifests.pvc_backup",
                 "upgrade.backup_database: false", "the flows' backup_database=false", "upgrade.missing_job: warn",
                 "allow_missing_steps"):
        assert text in msg


def test_a_missing_cronjob_with_the_opt_out_is_a_warning() -> None:
    options = dict(UPGRADE, missing_job="warn")
    planned, warnings = backup_step.plan("upgrade", options, NS, REF, _render("openstack_helm/keystone.out"),
                                         _Cluster(None).get)
    assert planned is None and len(warnings) == 1 and "mariadb-backup is not in namespace" in warnings[0]


def test_scripts_without_the_restore_side_are_refused() -> None:
    cluster = _Cluster()
    scripts = copy.deepcopy(SCRIPTS)
    del scripts["data"]["restore_mariadb.sh"]
    cluster.objects[("ConfigMap", "mariadb-bin")] = scripts
    with pytest.raises(PhaseError, match="conf.backup.enabled"):
        backup_step.plan("upgrade", UPGRADE, NS, REF, _render("openstack_helm/keystone.out"), cluster.get)


def _env(job: Dict[str, Any]) -> Dict[str, Any]:
    return {e["name"]: e.get("value") for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}


def test_an_upgrade_of_nova_backs_up_its_three_databases_in_one_job() -> None:
    """nova's db-init creates the API database, cell0 (from a Secret) and cell1."""
    planned, _warnings = backup_step.plan("upgrade", UPGRADE, NS, REF, _render("service_database/nova.out"),
                                          _Cluster().get)
    assert planned is not None and planned.source["databases"] == NOVA
    assert _env(planned.rendered.obj)["LCM_DATABASES"] == "nova nova_cell0 nova_cell1"


def test_databases_named_in_the_option_win_over_the_render() -> None:
    rendered = _render("service_database/nova.out")
    for backup, expected in (({"databases": ["nova_cell1", "nova"]}, ["nova_cell1", "nova"]),
                             ({"database": "nova"}, ["nova"]),
                             ({"databases": ["nova"], "database": "nova_cell0"}, ["nova", "nova_cell0"])):
        options = dict(UPGRADE, backup={"cronjob": "mariadb-backup", **backup})
        planned, _warnings = backup_step.plan("upgrade", options, NS, REF, rendered, _Cluster().get)
        assert planned is not None and planned.source["databases"] == expected


def test_a_render_that_cannot_say_names_the_flow_input_and_no_credentials() -> None:
    """conf.nova.database.connection: null, the connection given at run time."""
    rendered = _render("service_database/nova.out")
    etc = next(r.obj for r in rendered if r.name == "nova-etc")
    etc["data"]["nova.conf"] = base64.b64encode(b"[api_database]\nmax_retries = -1\n").decode()
    for phase_type, options in (("upgrade", UPGRADE), ("rollback", dict(RESTORE, backup={"cronjob": "mariadb-backup"}))):
        with pytest.raises(PhaseError) as err:
            backup_step.plan(phase_type, options, NS, REF, rendered, _Cluster().get)
        message = str(err.value)
        assert message.startswith("Job nova-db-init container nova-db-init-0: /etc/nova/nova.conf from Secret "
                                  "nova-etc has no [api_database] connection")
        assert "conf.nova.api_database.connection is null" in message
        assert f"name them in {phase_type}.backup.databases" in message
        for text in ("fake-", "-pw", "mysql+pymysql", "://"):
            assert text not in message
    assert "the flows' backup_databases input, the upgrade role's upgrade_backup_databases" in str(
        pytest.raises(PhaseError, backup_step.plan, "upgrade", UPGRADE, NS, REF, rendered, _Cluster().get).value)


def test_a_cell0_secret_outside_the_render_is_read_from_the_cluster() -> None:
    rendered = _render("service_database/nova.out")
    cell0 = next(r for r in rendered if r.name == "nova-db-cell0-user")
    rendered.remove(cell0)
    cluster = _Cluster()
    cluster.objects[("Secret", "nova-db-cell0-user")] = cell0.obj
    planned, _warnings = backup_step.plan("upgrade", UPGRADE, NS, REF, rendered, cluster.get)
    assert planned is not None and planned.source["databases"] == NOVA
    assert ("Secret", "nova-db-cell0-user") in cluster.reads


@pytest.mark.parametrize("recorded, expected", [
    ({"databases": NOVA}, NOVA),
    ({"database": "keystone"}, ["keystone"]),  # a backupSource written before there were several
])
def test_a_rollback_restores_every_recorded_database_without_a_db_init_in_the_render(
        recorded: Dict[str, Any], expected: List[str]) -> None:
    """A rollback renders with the release's values, whose jobs are off: the
    databases come from what the upgrade recorded."""
    rendered = [r for r in _render("openstack_helm/keystone.out") if r.kind != "Job"]
    options = dict(RESTORE, backup={"cronjob": "mariadb-backup", "namespace": NS, **recorded})
    planned, _warnings = backup_step.plan("rollback", options, NS, REF, rendered, _Cluster().get)
    assert planned is not None and planned.step == "restore"
    assert planned.rendered.name == f"{REF}-db-restore"
    assert planned.rendered.obj["metadata"]["labels"]["lifecycle.openstack.org/database-step"] == "restore"
    assert _env(planned.rendered.obj)["LCM_DATABASES"] == " ".join(expected)
    assert planned.source == {"cronjob": "mariadb-backup", "namespace": NS, "databases": expected}


def test_a_rollback_without_recorded_databases_reads_the_secrets_of_the_deployed_render() -> None:
    rendered = [r for r in _render("service_database/nova.out") if r.kind != "Job"]
    options = dict(RESTORE, backup={"cronjob": "mariadb-backup"})
    planned, _warnings = backup_step.plan("rollback", options, NS, REF, rendered, _Cluster().get)
    assert planned is not None and sorted(planned.source["databases"]) == NOVA


def test_a_restore_from_a_hostpath_runs_on_the_recorded_node() -> None:
    cluster = _Cluster(HOSTPATH)
    rendered = _render("openstack_helm/keystone.out")
    with pytest.raises(PhaseError, match="node"):
        backup_step.plan("rollback", RESTORE, NS, REF, rendered, cluster.get)
    on_node = dict(RESTORE, backup=dict(RESTORE["backup"], node="node-2"))
    planned, _warnings = backup_step.plan("rollback", on_node, NS, REF, rendered, cluster.get)
    assert planned is not None
    terms = planned.rendered.obj["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert all({"key": "metadata.name", "operator": "In", "values": ["node-2"]} in t["matchFields"] for t in terms)


def _pod(phase: str, node: str) -> Dict[str, Any]:
    return {"spec": {"nodeName": node}, "status": {"phase": phase}}


def test_a_hostpath_backup_records_the_node_of_its_successful_pod() -> None:
    rendered = _render("openstack_helm/keystone.out")
    local, _warnings = backup_step.plan("upgrade", UPGRADE, NS, REF, rendered, _Cluster(HOSTPATH).get)
    assert local is not None
    pods = [_pod("Failed", "node-1"), _pod("Succeeded", "node-2")]
    assert backup_step.taken_source(local, pods) == {
        "cronjob": "mariadb-backup", "namespace": NS, "databases": ["keystone"], "node": "node-2"}
    claim, _warnings = backup_step.plan("upgrade", UPGRADE, NS, REF, rendered, _Cluster().get)
    assert claim is not None and "node" not in backup_step.taken_source(claim, pods)
