"""plugins/module_utils/phase/steps.py: a requested database step with nothing to run
is an error before anything changes, or with the opt-out a warning."""

from __future__ import annotations

import copy
from typing import List

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.helm import render
from ansible_collections.lcm.openstack.plugins.module_utils.phase import selection, steps
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from support.paths import UNIT_FIXTURES

FIXTURES = UNIT_FIXTURES
KEYSTONE = render.parse_manifest((FIXTURES / "openstack_helm" / "keystone.out").read_text())
EXAMPLE = render.parse_manifest((FIXTURES / "phase" / "rendered_keystone.out").read_text())


def _chosen(rendered: List[render.Rendered], phase_type: str, templates=None) -> List[render.Rendered]:
    fresh = [render.Rendered(copy.deepcopy(r.obj), r.source) for r in rendered]
    return selection.select(fresh, phase_type, "templates", templates)


@pytest.mark.parametrize("phase_type, option, template, switch", [
    ("uninstall", "purge_database", "templates/job-db-drop.yaml", "job_db_drop"),
    ("upgrade", "backup_database", "templates/job-db-backup.yaml", "job_db_backup"),
    ("rollback", "restore_database", "templates/job-db-restore.yaml", "job_db_restore"),
])
def test_a_requested_step_the_chart_cannot_do_is_an_error(
        phase_type: str, option: str, template: str, switch: str) -> None:
    chosen = _chosen(KEYSTONE, phase_type)  # openstack-helm keystone: no drop, backup or restore job
    with pytest.raises(PhaseError) as err:
        steps.requested_steps(phase_type, {option: True}, chosen)
    msg = str(err.value)
    assert f"{phase_type}.{option} asks the phase to" in msg
    assert f"the chart renders no {template}, so nothing would" in msg
    assert f"Turn on manifests.{switch}" in msg and "source.templates" in msg
    assert f"{phase_type}.missing_job: warn" in msg
    # a backup or a restore can come from the mariadb chart's CronJob; a drop cannot
    assert (f"set {phase_type}.backup.cronjob to the mariadb chart's backup CronJob" in msg) == (
        phase_type != "uninstall")
    if phase_type != "uninstall":
        assert "manifests.cron_job_mariadb_backup, conf.backup.enabled" in msg


def test_the_opt_out_warns_with_what_was_not_done() -> None:
    chosen = _chosen(KEYSTONE, "uninstall")
    assert steps.requested_steps("uninstall", {"purge_database": True, "missing_job": "warn"}, chosen) == [
        "uninstall.purge_database was asked, but the chart renders no templates/job-db-drop.yaml: "
        "the database was not dropped (uninstall.missing_job: warn)"]


def test_an_unknown_opt_out_value_is_an_error() -> None:
    with pytest.raises(PhaseError, match="uninstall.missing_job must be one of fail, warn, not 'skip'"):
        steps.requested_steps("uninstall", {"purge_database": True, "missing_job": "skip"}, [])


@pytest.mark.parametrize("phase_type, options", [
    ("uninstall", {}), ("uninstall", {"purge_database": False}), ("install", {"purge_database": True}),
    ("test", {}), ("upgrade", {"backup_database": None}),
])
def test_nothing_asked_nothing_checked(phase_type: str, options: dict) -> None:
    assert steps.requested_steps(phase_type, options, []) == []


@pytest.mark.parametrize("phase_type, option", [
    ("uninstall", "purge_database"), ("upgrade", "backup_database"), ("rollback", "restore_database")])
def test_a_chart_with_the_job_passes(phase_type: str, option: str) -> None:
    chosen = _chosen(EXAMPLE, phase_type)  # the example chart renders all three
    assert steps.requested_steps(phase_type, {option: True}, chosen) == []


def test_an_explicit_template_named_for_the_step_provides_it() -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "mariadb-backup-once"},
           "spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}}
    chosen = [render.Rendered(job, "templates/job-mariadb-backup.yaml")]
    assert steps.requested_steps("upgrade", {"backup_database": True}, chosen, ["job-mariadb-backup"]) == []
    # the same job without an explicit list is not the step's template
    with pytest.raises(PhaseError):
        steps.requested_steps("upgrade", {"backup_database": True}, chosen)
    # an explicit list without such a template does not provide it
    sync = list(_chosen(KEYSTONE, "upgrade", ["job-db-sync"]))
    with pytest.raises(PhaseError):
        steps.requested_steps("upgrade", {"backup_database": True}, sync, ["job-db-sync"])


def test_manifest_switch() -> None:
    assert steps.manifest_switch("templates/job-db-drop.yaml") == "job_db_drop"


@pytest.mark.parametrize("phase_type, option, step", [
    ("upgrade", "backup_database", "backup"), ("rollback", "restore_database", "restore")])
def test_a_job_made_from_the_backup_cronjob_provides_its_step(phase_type: str, option: str, step: str) -> None:
    """The Job backup_step makes is labelled with its step; one labelled with
    the other step, or a Pod so labelled, does not count."""
    def job(kind: str, label: str) -> render.Rendered:
        return render.Rendered({"apiVersion": "v1", "kind": kind, "metadata": {
            "name": "keystone-x", "labels": {"lifecycle.openstack.org/database-step": label}}}, "cronjob:mariadb-backup")
    chosen = _chosen(KEYSTONE, phase_type)
    assert steps.requested_steps(phase_type, {option: True}, chosen + [job("Job", step)]) == []
    other = "restore" if step == "backup" else "backup"
    for extra in (job("Job", other), job("Pod", step)):
        with pytest.raises(PhaseError):
            steps.requested_steps(phase_type, {option: True}, chosen + [extra])


# -- database jobs run only when their phase option asks ---------------------------

RENDERED = UNIT_FIXTURES / "phase" / "rendered_keystone.out"


def _sources(objects) -> set:
    return {o.source for o in objects}


@pytest.mark.parametrize("phase_type, option, template", [
    ("upgrade", "backup_database", "templates/job-db-backup.yaml"),
    ("rollback", "restore_database", "templates/job-db-restore.yaml"),
    ("uninstall", "purge_database", "templates/job-db-drop.yaml"),
])
def test_a_database_job_is_left_out_unless_asked_for(phase_type: str, option: str, template: str) -> None:
    rendered = render.parse_manifest(RENDERED.read_text())
    assert template in _sources(rendered), "the fixture must render the job"
    assert template not in _sources(steps.without_unasked(rendered, phase_type, {}))
    assert template not in _sources(steps.without_unasked(rendered, phase_type, {option: False}))
    assert template in _sources(steps.without_unasked(rendered, phase_type, {option: True}))


def test_other_phases_keep_every_object() -> None:
    rendered = render.parse_manifest(RENDERED.read_text())
    assert steps.without_unasked(rendered, "install", {}) == rendered


def test_a_chart_with_no_database_has_nothing_to_back_up_restore_or_drop() -> None:
    """libvirt's and openvswitch's charts render DaemonSets and no database: their
    update flows ask for a backup by default, and the step is dropped with a word."""
    from ansible_collections.lcm.openstack.plugins.module_utils.helm.render import Rendered as R
    agent = [R({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "libvirt-libvirt-default"}})]
    options, said = steps.without_database("upgrade", {"backup_database": True, "missing_job": "fail"}, agent)
    assert options == {"backup_database": False, "missing_job": "fail"}
    assert said == ["upgrade.backup_database: the chart renders no database (no db-init, db-sync or db-drop Job, "
                    "no database Secret), so there is nothing to back up: no backup was taken"]
    assert steps.without_database("uninstall", {"purge_database": True}, agent)[0] == {"purge_database": False}
    service = agent + [R({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "nova-db-sync"}})]
    assert steps.without_database("upgrade", {"backup_database": True}, service) == ({"backup_database": True}, [])
    assert steps.without_database("install", {}, agent) == ({}, [])
