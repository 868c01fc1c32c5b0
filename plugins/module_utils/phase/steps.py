# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A step the user asked for must have something to run.

An upgrade asked to back up the database, a rollback asked to restore it, an
uninstall asked to drop it (model.DATABASE_JOBS): if the chart renders no Job
for that step, the phase would report success having done nothing. That is
an error before anything changes, naming what is missing and how to fix it;
with the type's opt-out (``missing_job: warn``) it is a warning that says
exactly what was not done.
"""

from __future__ import annotations

import fnmatch
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.phase import service_database
from ansible_collections.lcm.openstack.plugins.module_utils.phase.db_backup import LABEL_DATABASE_STEP
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import DATABASE_JOBS
from ansible_collections.lcm.openstack.plugins.module_utils.helm.render import Rendered

# The option of the upgrade, rollback and uninstall blocks: "fail" (default)
# or "warn" when a requested database step has no job to run.
MISSING_JOB_OPTION = "missing_job"
MISSING_JOB_CHOICES = ("fail", "warn")

# option -> (what the step does, what is not done without it, a word its templates carry)
_STEPS = {
    "backup_database": ("back up the database", "no backup was taken", "backup"),
    "restore_database": ("restore the database", "the database was not restored", "restore"),
    "purge_database": ("drop the database", "the database was not dropped", "drop"),
}
_WORK_KINDS = ("Job", "Pod")


def requested_steps(phase_type: str, options: Mapping[str, Any], chosen: Sequence[Rendered],
                    templates: Optional[Sequence[str]] = None) -> List[str]:
    """Check the database step the phase's options ask for against the chosen
    objects. Returns the warnings to give (the step is missing and the user
    opted out), or raises PhaseError (missing, no opt-out). `templates` is
    the explicit source.templates, if given: a template named with the
    step's word (backup, restore, drop) then provides the step."""
    option, template = DATABASE_JOBS.get(phase_type, ("", ""))
    if not option or not options.get(option):
        return []
    policy = str(options.get(MISSING_JOB_OPTION) or "fail")
    if policy not in MISSING_JOB_CHOICES:
        raise PhaseError(f"{phase_type}.{MISSING_JOB_OPTION} must be one of "
                         f"{', '.join(MISSING_JOB_CHOICES)}, not {policy!r}")
    does, not_done, word = _STEPS[option]
    if _provided(chosen, template, word, templates is not None):
        return []
    switch = manifest_switch(template)
    cronjob = ""
    if word in ("backup", "restore"):
        cronjob = (f", set {phase_type}.backup.cronjob to the mariadb chart's backup CronJob "
                   "(mariadb values manifests.cron_job_mariadb_backup, conf.backup.enabled and "
                   "manifests.pvc_backup)")
    if policy == "warn":
        return [f"{phase_type}.{option} was asked, but the chart renders no {template}: {not_done} "
                f"({phase_type}.{MISSING_JOB_OPTION}: warn)"]
    raise PhaseError(
        f"{phase_type}.{option} asks the phase to {does}, but the chart renders no {template}, so "
        f"nothing would. Turn on manifests.{switch} in the values, pass source.templates naming the "
        f"job that does it{cronjob}, or set {phase_type}.{MISSING_JOB_OPTION}: warn (or {option}: false) "
        "to go on without it")


def without_database(phase_type: str, options: Mapping[str, Any],
                     rendered: Sequence[Rendered]) -> Tuple[Dict[str, Any], List[str]]:
    """The options with the database step turned off, and the warning that says
    so, for a chart that renders no database at all (libvirt, openvswitch):
    its flows ask for a backup by default, and there is nothing to take."""
    option, _template = DATABASE_JOBS.get(phase_type, ("", ""))
    if not option or not options.get(option) or service_database.uses_database(r.obj for r in rendered):
        return dict(options), []
    does, not_done, _word = _STEPS[option]
    return dict(options, **{option: False}), [
        f"{phase_type}.{option}: the chart renders no database (no db-init, db-sync or db-drop Job, no "
        f"database Secret), so there is nothing to {does.replace(' the database', '')}: {not_done}"]


def manifest_switch(template: str) -> str:
    """openstack-helm's manifests key of a template: templates/job-db-drop.yaml -> job_db_drop."""
    base = template.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return base.replace("-", "_")


def _provided(chosen: Sequence[Rendered], template: str, word: str, explicit: bool) -> bool:
    """A Job of the step's template, one made from the backup CronJob for it
    (labelled with its step, backup_step), or with source.templates a
    template whose name says the step."""
    for r in chosen:
        if r.kind == "Job" and ((r.obj.get("metadata") or {}).get("labels") or {}).get(LABEL_DATABASE_STEP) == word:
            return True
        if r.kind not in _WORK_KINDS or not r.source:
            continue
        if fnmatch.fnmatchcase(r.source, template):
            return True
        if explicit and word in r.source.rsplit("/", 1)[-1]:
            return True
    return False


def without_unasked(rendered: List[Rendered], phase_type: str, options: Mapping[str, Any]) -> List[Rendered]:
    """Drop the backup, restore or drop job unless the phase's option asks for it."""
    option, template = DATABASE_JOBS.get(phase_type, ("", ""))
    if not option or options.get(option):
        return rendered
    return [r for r in rendered if r.source != template]
