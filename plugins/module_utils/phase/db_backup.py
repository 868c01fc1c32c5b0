# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Database backups the openstack-helm way: one-off Jobs made from the mariadb
chart's backup CronJob.

The mariadb chart renders CronJob ``mariadb-backup`` when
``manifests.cron_job_mariadb_backup`` and ``conf.backup.enabled`` are on. Its
container runs ``backup_mariadb.sh [SCOPE]`` (helm-toolkit's backup framework):
SCOPE is one database or ``all``, and the archive lands in
``$MARIADB_BACKUP_BASE_DIR/db/<namespace>/mariadb/archive`` as
``mariadb.<namespace>.<scope>.<BACK_UP_MODE>.<date>.tar.gz``. The restore side
of the same framework, ``restore_mariadb.sh restore <archive> <database>``, is
in the same scripts ConfigMap but mounted by nothing.

So an upgrade's backup is a Job made from the CronJob's jobTemplate that backs
up each of the service's databases in turn (nova has three) with BACK_UP_MODE
set to the phase's backup ref, and a rollback's restore is a Job from the
same jobTemplate (same account, volumes, secrets and configuration) that
mounts the restore scripts, finds the newest archive of that ref for every
database, then restores them one after the other. One Job for all of them,
not one per database: the stock chart's archive claim is ReadWriteOnce, and
archives on a node's hostPath must all be on the one node the restore then
runs on.

Everything here is pure: it reads the CronJob (live or rendered) and returns
Job bodies. What owns the Jobs is for the phase to decide (``ownership``):
no ownerReferences are set, and none is copied from the CronJob.
"""

from __future__ import annotations

import copy
import hashlib
import posixpath
import re
import shlex
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.phase.backup_cronjob import (
    BASE_DIR_ENV, DATABASE_ENV, DATABASES_ENV, MODE_ENV, NAMESPACE_ENV, RESTORE_MAIN, RESTORE_SCRIPT, SYSTEM, BackupShapeError,
    CronJobBackup, inspect,
)
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import GROUP

LABEL_BACKUP_REF = f"{GROUP}/backup-ref"
LABEL_DATABASE_STEP = f"{GROUP}/database-step"
ANNOTATION_FROM_CRONJOB = f"{GROUP}/from-cronjob"
# What `kubectl create job --from=cronjob/...` marks its Jobs with.
ANNOTATION_INSTANTIATE = "cronjob.kubernetes.io/instantiate"

# A finished Job keeps its pods' logs this long; the archive outlives it.
DEFAULT_TTL_SECONDS = 86400
# Fresh pods (restartPolicy Never): each try starts from a clean /tmp and its
# own verification server, and a failed try's log stays readable.
DEFAULT_BACKOFF_LIMIT = 2
_NAME_MAX = 63  # a Job's name is also its pods' job-name label value

# The archive name is split on '.', so neither a ref nor a database may hold one.
_REF = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")
_DATABASE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$")
# "all" is backup_mariadb.sh's scope for every database; the others it refuses.
_NOT_ONE_DATABASE = ("all", "information_schema", "performance_schema", "mysql", "sys")

# The shell of both Jobs (POSIX sh): where the archives of this backup are, and
# the newest one of a database (the glob sorts by the archive's ISO date).
_ARCHIVES = f"""\
dir="${{{BASE_DIR_ENV}}}/db/${{{NAMESPACE_ENV}}}/{SYSTEM}/archive"
newest() {{
  found=""
  for path in "$dir/{SYSTEM}.${{{NAMESPACE_ENV}}}.$1.${{{MODE_ENV}}}."*.tar.gz; do
    if [ -f "$path" ]; then found="${{path##*/}}"; fi
  done
  echo "$found"
}}
"""

# backup_mariadb.sh takes one database (its SCOPE) and exits 0 even when the
# dump failed: each database is backed up in turn, and a run that wrote no new
# archive fails the Job. {invoke} is the chart's own call of the script.
_BACKUP = _ARCHIVES + f"""\
for {DATABASE_ENV} in ${{{DATABASES_ENV}}}; do
  before=$(newest "${{{DATABASE_ENV}}}")
  {{invoke}} "${{{DATABASE_ENV}}}" || exit 1
  after=$(newest "${{{DATABASE_ENV}}}")
  if [ -z "$after" ] || [ "$after" = "$before" ]; then
    echo "the backup of database ${{{DATABASE_ENV}}} wrote no archive of backup ${{{MODE_ENV}}} in $dir" >&2
    exit 1
  fi
done
"""

# Every archive is found before any database is restored: a backup that is
# not all there restores nothing.
_RESTORE = _ARCHIVES + f"""\
for {DATABASE_ENV} in ${{{DATABASES_ENV}}}; do
  if [ -z "$(newest "${{{DATABASE_ENV}}}")" ]; then
    echo "no backup archive of database ${{{DATABASE_ENV}}} for backup ${{{MODE_ENV}}} in $dir: removed by the" \\
      "chart's retention (conf.backup.days_to_keep), or taken on another volume or node" >&2
    exit 1
  fi
done
for {DATABASE_ENV} in ${{{DATABASES_ENV}}}; do
  archive=$(newest "${{{DATABASE_ENV}}}")
  echo "restoring database ${{{DATABASE_ENV}}} from $archive"
  {RESTORE_SCRIPT} restore "$archive" "${{{DATABASE_ENV}}}" || exit 1
done
"""
Databases = Union[str, Sequence[str]]


def archive_dir(backup: CronJobBackup, namespace: str) -> str:
    """Where backup_mariadb.sh writes its archives, run in `namespace`."""
    return posixpath.join(backup.base_dir, "db", namespace, SYSTEM, "archive")


def archive_prefix(namespace: str, database: str, ref: str) -> str:
    """The archive of backup `ref` is `<prefix><date>.tar.gz`."""
    return f"{SYSTEM}.{namespace}.{database}.{ref}."


def job_names(ref: str) -> Tuple[str, str]:
    """The backup and restore Jobs' names: `<ref>-db-backup`, `<ref>-db-restore`
    (the ref starts with the release, as openstack-helm's `keystone-db-sync`)."""
    return _name(ref, "db-backup"), _name(ref, "db-restore")


def backup_job(cronjob: Mapping[str, Any], databases: Databases, ref: str, namespace: str, *,
               ttl_seconds: Optional[int] = DEFAULT_TTL_SECONDS, backoff_limit: int = DEFAULT_BACKOFF_LIMIT,
               active_deadline_seconds: Optional[int] = None) -> Dict[str, Any]:
    """A one-off Job from the CronJob that backs up each of `databases` as backup `ref`."""
    backup, names = _checked(cronjob, databases, ref, namespace)
    job = _job(cronjob, backup, "backup", job_names(ref)[0], ref, namespace,
               ttl_seconds, backoff_limit, active_deadline_seconds)
    container = _container(job, backup.container)
    container["command"], container["args"] = _backup_command(container, backup, str(cronjob["metadata"]["name"]))
    _set_env(container, {MODE_ENV: ref, DATABASES_ENV: " ".join(names)})
    return job


def restore_job(cronjob: Mapping[str, Any], databases: Databases, ref: str, namespace: str, *,
                node: Optional[str] = None, ttl_seconds: Optional[int] = DEFAULT_TTL_SECONDS,
                backoff_limit: int = DEFAULT_BACKOFF_LIMIT,
                active_deadline_seconds: Optional[int] = None) -> Dict[str, Any]:
    """A one-off Job from the CronJob that restores each of `databases` from
    its newest archive of backup `ref`. Archives on a hostPath are on the node
    that took the backup: `node` (the backup pod's spec.nodeName) is then required."""
    backup, names = _checked(cronjob, databases, ref, namespace)
    if backup.node_local and not node:
        raise BackupShapeError(
            f"CronJob {backup.cronjob} keeps its archives on the hostPath {backup.archive_host_path} of the node "
            "that ran the backup: the restore needs that node's name (the backup pod's spec.nodeName), or "
            "the archives on a PersistentVolumeClaim (manifests.pvc_backup)")
    job = _job(cronjob, backup, "restore", job_names(ref)[1], ref, namespace,
               ttl_seconds, backoff_limit, active_deadline_seconds)
    container = _container(job, backup.container)
    container["command"], container["args"] = ["/bin/sh"], ["-c", _RESTORE]
    _set_env(container, {MODE_ENV: ref, DATABASES_ENV: " ".join(names)})
    mounts = [m for m in container.get("volumeMounts") or []
              if m.get("mountPath") not in (RESTORE_SCRIPT, RESTORE_MAIN)]
    for path in (RESTORE_SCRIPT, RESTORE_MAIN):
        mounts.append({"name": backup.scripts_volume, "mountPath": path,
                       "subPath": posixpath.basename(path), "readOnly": True})
    container["volumeMounts"] = mounts
    if backup.node_local and node:
        _pin_to_node(job["spec"]["template"]["spec"], node)
    return job


# -- helpers -----------------------------------------------------------------
def _checked(cronjob: Mapping[str, Any], databases: Databases, ref: str,
             namespace: str) -> Tuple[CronJobBackup, List[str]]:
    if not _REF.match(ref or ""):
        raise PhaseError(f"backup ref {ref!r} must be lower-case letters, digits and '-' (no '.': the "
                         "archive's name is split on dots)")
    names = [databases] if isinstance(databases, str) else list(databases or [])
    names = [n for i, n in enumerate(names) if n not in names[:i]]
    if not names:
        raise PhaseError("the backup Job needs the databases it backs up or restores")
    for database in names:
        if not _DATABASE.match(database or "") or database.lower() in _NOT_ONE_DATABASE:
            raise PhaseError(f"database {database!r} cannot be backed up one by one: give the service's own "
                             "database names (letters, digits, '_' or '-'; not a system database)")
    if not namespace:
        raise PhaseError("the backup Job needs the namespace it runs in")
    backup = inspect(cronjob)
    if backup.namespace and backup.namespace != namespace:
        raise BackupShapeError(
            f"CronJob {backup.cronjob} is in namespace {backup.namespace}: its Jobs must run there, where its "
            f"account, secrets, scripts and archive volume are, not in {namespace}")
    return backup, names


def _job(cronjob: Mapping[str, Any], backup: CronJobBackup, step: str, name: str, ref: str,
         namespace: str, ttl_seconds: Optional[int], backoff_limit: int,
         active_deadline_seconds: Optional[int]) -> Dict[str, Any]:
    template = copy.deepcopy(cronjob["spec"]["jobTemplate"])
    meta = template.get("metadata") or {}
    ours = {LABEL_BACKUP_REF: ref, LABEL_DATABASE_STEP: step}
    spec = {k: v for k, v in (template.get("spec") or {}).items()
            if k not in ("selector", "manualSelector", "suspend", "ttlSecondsAfterFinished")}
    spec["backoffLimit"] = backoff_limit
    if ttl_seconds is not None:
        spec["ttlSecondsAfterFinished"] = ttl_seconds
    if active_deadline_seconds:
        spec["activeDeadlineSeconds"] = active_deadline_seconds
    pod_meta = spec["template"].setdefault("metadata", {}) or {}
    spec["template"]["metadata"] = pod_meta
    pod_meta["labels"] = {**(pod_meta.get("labels") or {}), **ours}
    spec["template"]["spec"]["restartPolicy"] = "Never"
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {**(meta.get("labels") or {}), **ours},
            "annotations": {**(meta.get("annotations") or {}), ANNOTATION_INSTANTIATE: "manual",
                            ANNOTATION_FROM_CRONJOB: backup.cronjob},
        },
        "spec": spec,
    }


def _container(job: Dict[str, Any], name: str) -> Dict[str, Any]:
    return next(c for c in job["spec"]["template"]["spec"]["containers"] if c.get("name") == name)


def _backup_command(container: Mapping[str, Any], backup: CronJobBackup,
                    cronjob: str) -> Tuple[List[str], List[str]]:
    """The container's command and args with the backup script's call made the
    loop over the databases. The chart's shell line ends with the script (it
    starts the verification server first): the loop replaces that call, and
    what comes before it stays. An exec-form call becomes a shell running it."""
    command = [str(a) for a in container.get("command") or []]
    args = [str(a) for a in container.get("args") or []]
    words = command + args
    last = words[-1].rstrip() if words else ""
    shell = len(words) >= 2 and words[-2] == "-c"
    script = backup.script_path
    if shell and last.endswith(script) and (last == script or last[-len(script) - 1] in " \t\n;&"):
        # one group in the call's place: "a && script" still runs the backups only after a
        line = last[:-len(script)] + "{\n" + _BACKUP.replace("{invoke}", shlex.quote(script)) + "}"
        if args:
            return command, args[:-1] + [line]
        return command[:-1] + [line], args
    if not shell and last == script:
        return ["/bin/sh"], ["-c", _BACKUP.replace("{invoke}", " ".join(shlex.quote(w) for w in words))]
    raise BackupShapeError(
        f"CronJob {cronjob}: container {backup.container} does not end its command with "
        f"{script}, so the databases to back up cannot be passed to it")


def _set_env(container: Dict[str, Any], values: Mapping[str, str]) -> None:
    env = [e for e in container.get("env") or [] if e.get("name") not in values]
    container["env"] = env + [{"name": k, "value": v} for k, v in values.items()]


def _pin_to_node(pod: Dict[str, Any], node: str) -> None:
    """Schedule only on `node` (by the Node's name, not a label), keeping the
    CronJob's own node affinity: each of its terms gets the node added."""
    field = {"key": "metadata.name", "operator": "In", "values": [node]}
    required = (pod.setdefault("affinity", {}).setdefault("nodeAffinity", {})
                .setdefault("requiredDuringSchedulingIgnoredDuringExecution", {}))
    terms = required.get("nodeSelectorTerms") or [{}]
    for term in terms:
        term["matchFields"] = [f for f in term.get("matchFields") or [] if f.get("key") != "metadata.name"] + [field]
    required["nodeSelectorTerms"] = terms


def _name(ref: str, suffix: str) -> str:
    name = f"{ref}-{suffix}"
    if len(name) <= _NAME_MAX:
        return name
    seed = hashlib.sha256(ref.encode()).hexdigest()[:8]
    head = ref[: _NAME_MAX - len(suffix) - len(seed) - 2].rstrip("-")
    return f"{head}-{seed}-{suffix}"
