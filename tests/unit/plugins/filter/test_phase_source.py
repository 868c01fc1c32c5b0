"""plugins/filter/phase_source.py: the filter the phase roles build the
phase's source option with, found by its FQCN; options left unset are not in
what it gives."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.lcm.openstack.plugins.filter.phase_source import FilterModule

FILTER = FilterModule().filters()["phase_source"]


def test_the_filter_builds_the_source() -> None:
    got = FILTER({"service": "keystone", "chart": "/srv/keystone"}, values={"a": 1}, values_files=[], values_from_release=True)
    assert got == {"chart": "/srv/keystone", "values": {"a": 1}, "values_files": [], "values_from_release": True}


def test_a_target_without_a_service_is_a_filter_error() -> None:
    with pytest.raises(AnsibleFilterError, match="names no service"):
        FILTER({"chart": "/srv/keystone"}, values={}, values_files=[])


def test_in_a_playbook_as_the_roles_use_it(render) -> None:
    variables = {"test_target": {"service": "keystone", "chart": "/srv/keystone", "chart_version": ""},
                 "test_values": {"a": 1}, "test_values_files": [], "test_templates": None, "test_selection": "",
                 "test_stage_value": "lifecycle.phase", "test_manifests": None}
    got = render("test_target | lcm.openstack.service_target('test_target') | lcm.openstack.phase_source("
                 "values=test_values, values_files=test_values_files, values_from_release=true, templates=test_templates, "
                 "selection=test_selection, stage_value=test_stage_value, manifests=test_manifests)", variables)
    assert not got.get("failed") and got["msg"] == {
        "chart": "/srv/keystone", "values": {"a": 1}, "values_files": [], "values_from_release": True, "stage_value": "lifecycle.phase"}
