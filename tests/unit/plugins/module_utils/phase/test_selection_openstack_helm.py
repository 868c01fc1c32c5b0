"""The default phase mapping on the real openstack-helm charts: install runs every
Job the chart renders that is not another phase's; explicit templates win."""

from __future__ import annotations

import copy
from typing import List

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.helm import render
from ansible_collections.lcm.openstack.plugins.module_utils.phase import selection
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import PHASE_ONLY_TEMPLATES
from support.paths import UNIT_FIXTURES

FIXTURES = UNIT_FIXTURES / "openstack_helm"
_PARSED = {name: render.parse_manifest((FIXTURES / f"{name}.out").read_text())
           for name in ("keystone", "placement")}


def _chart(name: str) -> List[render.Rendered]:
    return [render.Rendered(copy.deepcopy(r.obj), r.source) for r in _PARSED[name]]


def _job_waves(chart: str, phase_type: str, templates=None) -> List[List[str]]:
    chosen = selection.select(_chart(chart), phase_type, "templates", templates, "openstack")
    return [sorted(r.name for r in w) for w in selection.waves(chosen) if w[0].kind == "Job"]


def test_keystone_install_runs_all_its_jobs_in_declared_order() -> None:
    assert _job_waves("keystone", "install") == [
        ["keystone-credential-setup", "keystone-db-init", "keystone-fernet-setup", "keystone-rabbit-init"],
        ["keystone-db-sync"], ["keystone-domain-manage"], ["keystone-bootstrap"]]


def test_placement_install_runs_all_its_jobs_in_declared_order() -> None:
    assert _job_waves("placement", "install") == [
        ["placement-db-init", "placement-ks-service", "placement-ks-user"],
        ["placement-db-sync", "placement-ks-endpoints"]]


@pytest.mark.parametrize("chart", ["keystone", "placement"])
def test_install_leaves_out_only_the_other_phases_jobs(chart: str) -> None:
    rendered = _chart(chart)
    others = {t for globs in PHASE_ONLY_TEMPLATES.values() for t in globs}
    jobs = {r.name for r in rendered if r.kind == "Job" and r.source not in others}
    left_out = {r.source for r in rendered if r.kind == "Job" and r.source in others}
    chosen = {r.name for r in selection.select(rendered, "install", "templates") if r.kind == "Job"}
    assert chosen == jobs
    if chart == "keystone":
        assert left_out == {"templates/job-credential-cleanup.yaml"}


def test_explicit_templates_win_over_the_mapping() -> None:
    assert _job_waves("keystone", "install", ["job-db-init"]) == [["keystone-db-init"]]
    # a job another phase type owns by default is taken when named
    assert _job_waves("keystone", "uninstall", ["job-credential-cleanup"]) == [["keystone-credential-cleanup"]]


def test_keystone_upgrade_runs_db_sync_only_by_default() -> None:
    """No backup template in the chart: the default list asks for none (a
    requested backup with nothing to run is refused elsewhere)."""
    assert _job_waves("keystone", "upgrade") == [["keystone-db-sync"]]


def test_uninstall_takes_nothing_from_a_chart_without_db_drop() -> None:
    assert selection.select(_chart("keystone"), "uninstall", "templates") == []
