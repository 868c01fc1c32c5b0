"""plugins/plugin_utils/service_target.py: a role's target mapping read once,
each key left out or given empty taking its default, and a mapping without a
service refused with an error that names the role's input."""

from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.lcm.openstack.plugins.plugin_utils.service_target import BadTarget, service_target


def test_only_the_service_given_takes_every_default() -> None:
    assert service_target({"service": "keystone"}) == {
        "service": "keystone", "release": "keystone", "namespace": "openstack", "chart": "", "chart_version": ""}


def test_keys_given_are_kept() -> None:
    given = {"service": "keystone", "release": "keystone-a", "namespace": "cloud", "chart": "/srv/keystone",
             "chart_version": "2025.1.3"}
    assert service_target(given) == given


@pytest.mark.parametrize("empty", ["", None])
def test_a_key_given_empty_takes_its_default(empty: Any) -> None:
    got = service_target({"service": "glance", "release": empty, "namespace": empty, "chart": empty, "chart_version": empty})
    assert got == {"service": "glance", "release": "glance", "namespace": "openstack", "chart": "", "chart_version": ""}


def test_keys_the_roles_do_not_read_are_left_out() -> None:
    assert set(service_target({"service": "nova", "cell": "cell1"})) == {"service", "release", "namespace", "chart", "chart_version"}


@pytest.mark.parametrize("target", [{}, {"release": "keystone"}, {"service": ""}, {"service": None}])
def test_a_mapping_without_a_service_names_the_input(target: Any) -> None:
    with pytest.raises(BadTarget) as caught:
        service_target(target, "install_target")
    assert str(caught.value).startswith("install_target names no service: install_target.service is required")


@pytest.mark.parametrize("target", ["keystone", ["keystone"], None])
def test_a_target_that_is_no_mapping_names_the_input(target: Any) -> None:
    with pytest.raises(BadTarget, match=rf"^upgrade_target must be a mapping of service, release, namespace, chart, "
                                        rf"chart_version .*, not {type(target).__name__}$"):
        service_target(target, "upgrade_target")
