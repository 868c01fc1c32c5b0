# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An upgrade's backup or a rollback's restore, run from the mariadb chart's
backup CronJob when the service's chart has no job for it.

openstack-helm's service charts (keystone, placement, ...) render no
job-db-backup or job-db-restore: backups are the mariadb chart's business,
its CronJob ``mariadb-backup``. A phase told where that CronJob is (its
``backup`` option: ``cronjob``, ``namespace``, ``databases``, and for a
restore from a node's hostPath the ``node`` of the backup) makes a one-off
Job from it (db_backup) and runs it in its first work wave, after its
config objects and before anything else: the backup comes before db-sync
changes the schema. The databases are every one the service has, read from
the render (service_database), unless the option names them.

A chart that renders its own job-db-backup or job-db-restore keeps it: the
CronJob is then not read at all. What the Job was made from is recorded in
the upgrade Phase (``status.backupSource``), so a rollback makes its restore
Job from the same CronJob, for the same databases, on the same node. A
status written before there were several names one ``database``; it is read
as a list of one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.crds.phase import BackupSource
from ansible_collections.lcm.openstack.plugins.module_utils.phase import backup_cronjob, db_backup, service_database
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import DATABASE_JOBS
from ansible_collections.lcm.openstack.plugins.module_utils.helm.render import Rendered
from ansible_collections.lcm.openstack.plugins.module_utils.phase.selection import CONFIG_KINDS

# phase type -> the database step its CronJob-made Job does
STEPS = {"upgrade": "backup", "rollback": "restore"}
# The module's backup option, as given (also the Phase spec's, and status.backupSource's keys).
# `database` is the one name a status written before `databases` holds.
SOURCE_KEYS = ("cronjob", "namespace", "databases", "database", "node")
SOURCE_PREFIX = "cronjob:"
# How the mariadb chart renders its backup CronJob, for the messages.
TURN_ON = ("install mariadb with its backup CronJob (values manifests.cron_job_mariadb_backup, "
           "conf.backup.enabled and manifests.pvc_backup on)")

# Where a user names the databases when the render cannot say: the module's
# option, and the inputs of the roles and flows that set it.
NAMED_IN = {
    "upgrade": ("upgrade.backup.databases (the flows' backup_databases input, the upgrade role's "
                "upgrade_backup_databases)"),
    "rollback": ("rollback.backup.databases: the databases the upgrade backed up, as its Phase recorded them in "
                 "status.backupSource (the rollback role's rollback_backup_source; the flows read that Phase)"),
}

Getter = Callable[[str, str, str], Optional[Dict[str, Any]]]  # (api_version, kind, name) -> live object


@dataclass
class Planned:
    """The Job a phase runs from the CronJob, and what it records of it."""

    rendered: Rendered
    step: str                 # backup or restore
    source: BackupSource      # cronjob, namespace, databases (and node, for a restore)
    node_local: bool          # archives on a node's hostPath: the backup's node is recorded


def given(options: Mapping[str, Any]) -> Dict[str, Any]:
    """The phase's backup option with the keys left unset removed."""
    return {k: (list(v) if k == "databases" else str(v))
            for k, v in (options.get("backup") or {}).items() if k in SOURCE_KEYS and v}


def named_databases(source: Mapping[str, Any]) -> List[str]:
    """The databases a backup option or a recorded backupSource names:
    `databases`, and the one `database` of a status written before it."""
    names = [str(n) for n in source.get("databases") or []]
    one = source.get("database")
    return names + ([str(one)] if one and str(one) not in names else [])


def plan(phase_type: str, options: Mapping[str, Any], namespace: str, ref: str,
         rendered: Sequence[Rendered], get: Getter) -> Tuple[Optional[Planned], List[str]]:
    """The CronJob-made Job the phase runs, if any, and the warnings to give.

    None when the step is not asked, no CronJob is named, or the chart
    renders the step's own template (`rendered` is the whole render). A
    named CronJob that does not exist is an error saying how to turn it on
    or go without, or with ``missing_job: warn`` a warning (the step is
    then missing, which steps.requested_steps reports as well)."""
    step = STEPS.get(phase_type)
    option, template = DATABASE_JOBS.get(phase_type, ("", ""))
    src = given(options)
    if not step or not options.get(option) or not src.get("cronjob"):
        return None, []
    if any(r.source == template for r in rendered):
        return None, []  # the chart's own job wins
    name = src["cronjob"]
    cronjob = get("batch/v1", "CronJob", name)
    if cronjob is None:
        does = "back up the database" if step == "backup" else "restore the database"
        text = (f"{phase_type}.backup.cronjob {name} is not in namespace {namespace}, so nothing would {does}. "
                f"To take it from the mariadb chart, {TURN_ON} in {namespace}, or name its CronJob in "
                f"{phase_type}.backup.cronjob. To go on without it: {phase_type}.{option}: false (the flows' "
                f"{option}=false), or {phase_type}.missing_job: warn (allow_missing_steps in the roles and flows)")
        if str(options.get("missing_job") or "fail") == "warn":
            return None, [text]
        raise PhaseError(text)
    backup = backup_cronjob.inspect(cronjob)
    backup_cronjob.check_scripts(backup, get("v1", "ConfigMap", backup.scripts_configmap) or {})
    databases = named_databases(src) or _render_databases(rendered, phase_type, get)
    if step == "backup":
        job = db_backup.backup_job(cronjob, databases, ref, namespace,
                                   active_deadline_seconds=options.get("backup_timeout") or None)
    else:
        job = db_backup.restore_job(cronjob, databases, ref, namespace, node=src.get("node") or None)
    source: BackupSource = {"cronjob": name, "namespace": namespace, "databases": databases}
    if step == "restore" and backup.node_local and src.get("node"):
        source["node"] = src["node"]
    return Planned(Rendered(job, source=SOURCE_PREFIX + name), step, source, backup.node_local), []


def joined(chosen: Sequence[Rendered], job: Rendered) -> List[Rendered]:
    """The phase's objects with the CronJob-made Job in a wave of its own,
    after the config objects and before every other wave (db-sync's among
    them, whatever waves the selection gave them)."""
    work = [r.wave for r in chosen if r.kind not in CONFIG_KINDS]
    job.wave = (min([w[0] for w in work if w] + [0]) - 1,)
    return sorted(list(chosen) + [job], key=lambda r: r.wave)


def is_step(r: Rendered, word: str) -> bool:
    """Whether a rendered object is a CronJob-made Job doing `word` (backup, restore)."""
    labels = (r.obj.get("metadata") or {}).get("labels") or {}
    return r.kind == "Job" and labels.get(db_backup.LABEL_DATABASE_STEP) == word


def taken_source(planned: Planned, pods: Sequence[Mapping[str, Any]]) -> BackupSource:
    """What status.backupSource records of a finished backup: where the
    archive is. Archives on a hostPath are on the node of the pod that
    succeeded, which the restore must then run on."""
    source: BackupSource = {**planned.source}
    if planned.node_local:
        nodes = [str((p.get("spec") or {}).get("nodeName") or "") for p in pods
                 if (p.get("status") or {}).get("phase") == "Succeeded"]
        if nodes and nodes[-1]:
            source["node"] = nodes[-1]
    return source


def _render_databases(rendered: Sequence[Rendered], phase_type: str, get: Getter) -> List[str]:
    """Every database of the service, from the render (and the cluster's
    Secrets the render uses but does not hold); where it cannot say, the
    error names the input that can."""
    try:
        return service_database.databases((r.obj for r in rendered), get=get)
    except service_database.DatabaseNotFound as exc:
        raise PhaseError(f"{exc}. So the databases to back up and restore are not known: name them in "
                         f"{NAMED_IN[phase_type]}") from None


def takes_backup(phase_type: str, backup_ref: Optional[str], wave: Sequence[Rendered]) -> bool:
    """The wave holds the upgrade's backup Job: the chart's or one made from the CronJob."""
    template = DATABASE_JOBS["upgrade"][1]
    return phase_type == "upgrade" and bool(backup_ref) and any(
        o.source == template or is_step(o, "backup") for o in wave)


def source_of(planned: Optional[Any], wave: Sequence[Rendered], result: Any) -> Optional[BackupSource]:
    """What status.backupSource records: the CronJob the backup Job of the
    wave was made from (`planned`, the phase's CronJob step; none for the
    chart's own job-db-backup)."""
    if planned is None or planned.step != "backup" or not any(o is planned.rendered for o in wave):
        return None
    pods = getattr(result, "pods", {}).get(("Job", planned.rendered.name), [])
    return taken_source(planned, pods)
