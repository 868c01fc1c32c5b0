"""plugins/plugin_utils/phase_source.py: the source option the phase roles
give lcm.openstack.phase, built once. An option the role leaves unset is
left out, so the module's own default applies; one that is set is given as
it is."""

from __future__ import annotations

from typing import Any, Dict

import pytest

from ansible_collections.lcm.openstack.plugins.plugin_utils.phase_source import phase_source
from ansible_collections.lcm.openstack.plugins.plugin_utils.service_target import BadTarget

TARGET = {"service": "keystone", "release": "keystone", "namespace": "openstack", "chart": "/srv/keystone", "chart_version": ""}
# A role's defaults: no templates, no selection, the stage value, no manifests.
ROLE_DEFAULTS: Dict[str, Any] = {"templates": None, "selection": "", "stage_value": "lifecycle.phase", "manifests": None}


def test_a_role_s_defaults_give_the_chart_values_files_and_stage_value_only() -> None:
    got = phase_source(TARGET, values={"lifecycle": {"version": "2025.1"}}, values_files=["base.yaml"], **ROLE_DEFAULTS)
    assert got == {"chart": "/srv/keystone", "values": {"lifecycle": {"version": "2025.1"}}, "values_files": ["base.yaml"],
                   "stage_value": "lifecycle.phase"}


def test_every_option_set_is_given() -> None:
    got = phase_source({**TARGET, "chart_version": "2025.1.3"}, values={}, values_files=[], values_from_release=True,
                       templates=["job-db-sync.yaml"], selection="stage", stage_value="conf.stage", manifests=[{"kind": "ConfigMap"}])
    assert got == {"chart": "/srv/keystone", "chart_version": "2025.1.3", "values": {}, "values_files": [], "values_from_release": True,
                   "templates": ["job-db-sync.yaml"], "selection": "stage", "stage_value": "conf.stage", "manifests": [{"kind": "ConfigMap"}]}


@pytest.mark.parametrize("empty", ["", None])
def test_an_empty_selection_stage_value_or_chart_version_is_left_out(empty: Any) -> None:
    got = phase_source({**TARGET, "chart_version": empty}, values={}, values_files=[], selection=empty, stage_value=empty)
    assert set(got) == {"chart", "values", "values_files"}


def test_empty_lists_of_templates_and_manifests_are_given_null_ones_are_not() -> None:
    assert phase_source(TARGET, values={}, values_files=[], templates=[], manifests=[])["templates"] == []
    assert phase_source(TARGET, values={}, values_files=[], templates=[], manifests=[])["manifests"] == []
    assert "templates" not in phase_source(TARGET, values={}, values_files=[], templates=None)
    assert "manifests" not in phase_source(TARGET, values={}, values_files=[], manifests=None)


def test_values_from_release_is_given_only_when_true() -> None:
    assert "values_from_release" not in phase_source(TARGET, values={}, values_files=[], values_from_release=False)
    assert phase_source(TARGET, values={}, values_files=[], values_from_release=True)["values_from_release"] is True


def test_the_values_and_their_files_are_given_as_they_come() -> None:
    values = {"manifests": {"job_db_backup": True}}
    got = phase_source(TARGET, values=values, values_files=["a.yaml", "b.yaml"])
    assert got["values"] is values and got["values_files"] == ["a.yaml", "b.yaml"]


def test_an_unread_target_gets_the_defaults_of_its_keys() -> None:
    got = phase_source({"service": "glance"}, values={}, values_files=[])
    assert got == {"chart": "", "values": {}, "values_files": []}


def test_a_target_without_a_service_is_refused() -> None:
    with pytest.raises(BadTarget, match="names no service"):
        phase_source({"chart": "/srv/keystone"}, values={}, values_files=[])
