"""plugins/filter/service_target.py: the filter every role reads its
<role>_target mapping with, found by its FQCN; a bad mapping fails the task
with the plugin's message, which names the role's input."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.lcm.openstack.plugins.filter.service_target import FilterModule

FILTER = FilterModule().filters()["service_target"]


def test_the_filter_fills_in_the_defaults() -> None:
    assert FILTER({"service": "keystone", "namespace": "cloud"}, "install_target") == {
        "service": "keystone", "release": "keystone", "namespace": "cloud", "chart": "", "chart_version": ""}


def test_a_bad_mapping_is_a_filter_error_naming_the_input() -> None:
    with pytest.raises(AnsibleFilterError, match="^rollback_target names no service"):
        FILTER({"release": "keystone"}, "rollback_target")


def test_in_a_playbook_as_the_roles_use_it(render) -> None:
    got = render("install_target | lcm.openstack.service_target('install_target')",
                 {"install_target": {"service": "keystone", "release": "", "chart": "/srv/keystone"}})
    assert not got.get("failed") and got["msg"] == {
        "service": "keystone", "release": "keystone", "namespace": "openstack", "chart": "/srv/keystone", "chart_version": ""}
    got = render("test_target | lcm.openstack.service_target('test_target')", {"test_target": {"namespace": "openstack"}})
    assert got["failed"] and "test_target names no service: test_target.service is required" in got["msg"]
