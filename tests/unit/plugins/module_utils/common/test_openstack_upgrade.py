"""plugins/module_utils/common/openstack_upgrade.py: the one table of how each
OpenStack project upgrades, found by the chart's name, extended by upgrade_commands."""

from __future__ import annotations

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.common import openstack_upgrade as table
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError


@pytest.mark.parametrize("chart,project", [
    ("/srv/charts/nova", "nova"), ("/srv/charts/nova/", "nova"), ("openstack-helm/neutron", "neutron"),
    ("oci://registry.example/openstack-helm/glance:2026.1.0", "glance"), ("/tmp/keystone-2025.2.0.tgz", "keystone"),
    ("/tmp/openstack-exporter.tgz", "openstack-exporter"),
])
def test_the_project_is_the_charts_name(chart: str, project: str) -> None:
    assert table.project_of(chart) == project


def test_the_rolling_projects_and_their_steps() -> None:
    assert sorted(n for n, p in table.PROJECTS.items() if p.rolling) == [
        "cinder", "glance", "keystone", "neutron", "nova", "placement"]
    keystone = table.steps("/srv/charts/keystone").jobs
    assert [j["command"] for j in keystone["expand"]] == [["keystone-manage", "db_sync", "--expand"]]
    assert [j["command"] for j in keystone["contract"]] == [["keystone-manage", "db_sync", "--contract"]]
    glance = table.steps("glance").jobs
    assert [j["name"] for j in glance["expand"]] == ["expand-1", "expand-2"]  # expand, then migrate
    nova = table.steps("nova").jobs
    assert nova["online"] == [{"step": "online", "name": "online", "command": ["nova-manage", "db", "online_data_migrations"],
                               "warning_exit_codes": [], "repeat_exit_codes": [1], "attempts": table.ONLINE_ATTEMPTS}]
    assert nova["contract"] == []
    assert all(s.jobs["check"][0]["warning_exit_codes"] == [1] for s in map(table.steps, table.PROJECTS))


def test_a_chart_the_table_does_not_know_has_no_steps_and_is_not_rolling() -> None:
    unknown = table.steps("/srv/charts/myapi")
    assert (unknown.rolling, unknown.jobs) == (False, {s: [] for s in table.STEPS})
    assert unknown.notes == "no rolling upgrade is known for myapi"


def test_upgrade_commands_extend_and_override_the_table() -> None:
    given = {"myapi": {"rolling": True, "expand": [["myapi-manage", "expand"]]},
             "keystone": {"check": []}}
    mine = table.steps("myapi", given)
    assert mine.rolling and [j["command"] for j in mine.jobs["expand"]] == [["myapi-manage", "expand"]]
    assert table.steps("keystone", given).jobs["check"] == []  # an empty list turns a step off
    assert table.steps("keystone", given).jobs["expand"]  # the rest is the table's


@pytest.mark.parametrize("given,message", [
    ({"nova": ["nova-manage"]}, "upgrade_commands.nova must be a mapping"),
    ({"nova": {"migrate": []}}, "upgrade_commands.nova: unknown key\\(s\\) migrate"),
    ({"nova": {"check": "nova-status upgrade check"}}, "upgrade_commands.nova.check must be a list of commands"),
    ({"nova": {"check": [["nova-status", ""]]}}, "upgrade_commands.nova.check must be a list of commands"),
])
def test_bad_upgrade_commands_name_the_input(given: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        table.steps("nova", given)
