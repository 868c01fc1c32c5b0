"""plugins/module_utils/site/model.py: a site's services parsed with their
defaults, and every mistake in it refused with one line naming the fix."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import SiteError
from ansible_collections.lcm.openstack.plugins.module_utils.site.model import (
    Dependency, parse_dependency, parse_site, planned_keys,
)
from support.paths import UNIT_FIXTURES

OPENSTACK_HELM = yaml.safe_load((UNIT_FIXTURES / "site" / "openstack_helm.yaml").read_text())


def _svc(name: str, *depends: str, version: str = "1.0", **more: Any) -> Dict[str, Any]:
    return dict(service=name, version=version, depends_on=list(depends), **more)


def _refused(services: List[Dict[str, Any]], **kwargs: Any) -> str:
    with pytest.raises(SiteError) as caught:
        parse_site(services, **kwargs)
    message = str(caught.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("text, expected", [
    ("mariadb", Dependency("mariadb", "openstack")),
    ("mariadb>=10.6", Dependency("mariadb", "openstack", "10.6")),
    (" mariadb >= 10.6 ", Dependency("mariadb", "openstack", "10.6")),
    ("infra/mariadb>=11", Dependency("mariadb", "infra", "11")),
    ("infra/ceph-mon", Dependency("ceph-mon", "infra")),
    ("keystone>=2025.1-rc1", Dependency("keystone", "openstack", "2025.1-rc1")),
])
def test_a_dependency_is_in_the_dependents_namespace_unless_it_names_one(text: str, expected: Dependency) -> None:
    assert parse_dependency(text, "openstack") == expected


@pytest.mark.parametrize("text", ["", "mariadb>10.6", "mariadb==10.6", "mariadb>=", "a/b/c", "/mariadb", "maria db",
                                  "mariadb>=10.6,<11", 42, None, {"name": "mariadb"}])
def test_a_malformed_dependency_says_how_to_write_one(text: Any) -> None:
    with pytest.raises(SiteError, match=r"^malformed dependency .*: write name, name>=min_version or "
                                        r"namespace/name>=min_version$"):
        parse_dependency(text, "openstack")


def test_the_openstack_helm_site_with_its_defaults() -> None:
    site = parse_site(OPENSTACK_HELM)
    assert list(site.services) == [("openstack", s) for s in ("mariadb", "memcached", "rabbitmq", "keystone", "placement")]
    keystone = site.services["openstack", "keystone"]
    assert (keystone.namespace, keystone.release, keystone.version, keystone.expected_duration) == \
        ("openstack", "keystone", "2026.1", 300)
    assert keystone.depends_on == [Dependency("mariadb", "openstack", "10.6"), Dependency("memcached", "openstack"),
                                   Dependency("rabbitmq", "openstack")]
    assert site.services["openstack", "memcached"].expected_duration == 60
    assert site.edges()[("openstack", "placement")] == [("openstack", "keystone"), ("openstack", "mariadb"),
                                                        ("openstack", "memcached")]
    assert site.namespaces == ["openstack"]


def test_release_and_namespace_given_win_and_durations_may_be_text() -> None:
    site = parse_site([_svc("keystone", namespace="identity", release="ks", expected_duration="120")])
    service = site.services["identity", "keystone"]
    assert (service.release, service.expected_duration) == ("ks", 120)


def test_a_service_name_is_qualified_only_where_two_namespaces_share_it() -> None:
    site = parse_site([_svc("keystone", namespace="a"), _svc("keystone", namespace="b"), _svc("mariadb", namespace="a")])
    assert [site.name(k) for k in site.services] == ["a/keystone", "b/keystone", "mariadb"]


def test_duplicate_service_in_one_namespace() -> None:
    assert _refused([_svc("keystone"), _svc("mariadb"), _svc("keystone")]) == (
        "service keystone is listed twice in namespace openstack: give each host of group "
        "openstack_services its own service or namespace")


def test_a_service_that_depends_on_itself() -> None:
    assert _refused([_svc("keystone", "mariadb", "keystone>=1")]) == \
        "keystone depends on itself: remove keystone>=1 from its depends_on"


def test_a_dependency_listed_twice() -> None:
    assert _refused([_svc("mariadb"), _svc("keystone", "mariadb", "mariadb>=1")]) == \
        "keystone lists mariadb twice in depends_on: keep one"


def test_a_dependency_not_in_the_site_names_both_and_the_fix() -> None:
    assert _refused([_svc("keystone", "mariadb")]) == (
        "keystone depends on mariadb, which is not in the site: add it to group openstack_services or "
        "remove it from depends_on (external: true if another run of the site deploys it)")


def test_a_dependency_in_another_namespace_is_looked_for_there() -> None:
    services = [_svc("mariadb", namespace="openstack"), _svc("keystone", "infra/mariadb", namespace="openstack")]
    assert "keystone depends on infra/mariadb, which is not in the site" in _refused(services)
    parse_site([_svc("mariadb", namespace="infra"), _svc("keystone", "infra/mariadb")])  # found there


def test_with_external_an_unknown_dependency_is_marked_and_not_an_edge() -> None:
    site = parse_site([_svc("keystone", "mariadb>=99", "memcached"), _svc("memcached")], external=True)
    keystone = site.services["openstack", "keystone"]
    assert keystone.depends_on == [Dependency("mariadb", "openstack", "99", external=True),
                                   Dependency("memcached", "openstack")]
    assert site.edges()[("openstack", "keystone")] == [("openstack", "memcached")]


@pytest.mark.parametrize("services, chain", [
    ([_svc("a", "b"), _svc("b", "a")], "a -> b -> a"),
    ([_svc("keystone", "placement"), _svc("placement", "nova"), _svc("nova", "keystone")],
     "keystone -> placement -> nova -> keystone"),
    ([_svc("mariadb"), _svc("keystone", "mariadb", "placement"), _svc("placement", "keystone"), _svc("horizon", "keystone")],
     "keystone -> placement -> keystone"),
])
def test_a_cycle_is_named_chain_and_all(services: List[Dict[str, Any]], chain: str) -> None:
    assert _refused(services) == (f"the dependencies form a cycle, {chain} (each depends on the next): "
                                  "remove one of these from depends_on")


def test_a_cycle_across_namespaces_names_them_where_needed() -> None:
    services = [_svc("keystone", "b/keystone", namespace="a"), _svc("keystone", "a/keystone", namespace="b")]
    assert "a cycle, a/keystone -> b/keystone -> a/keystone " in _refused(services)


def test_a_minimum_the_site_does_not_deploy() -> None:
    services = [_svc("mariadb", version="10.6"), _svc("keystone", "mariadb>=11")]
    assert _refused(services) == ("keystone needs mariadb>=11, the site deploys mariadb 10.6: raise mariadb's "
                                  "version or lower the minimum")


def test_minimums_are_compared_as_versions_not_text() -> None:
    parse_site([_svc("mariadb", version="10.11"), _svc("keystone", "mariadb>=10.6")])
    parse_site([_svc("keystone", version="2026.1"), _svc("placement", "keystone>=2025.2")])
    assert "needs keystone>=2026.2" in _refused([_svc("keystone", version="2026.1"), _svc("placement", "keystone>=2026.2")])


def test_a_removal_needs_no_versions_and_checks_no_minimum() -> None:
    site = parse_site([_svc("mariadb", version=""), _svc("keystone", "mariadb>=11", version="")], action="remove")
    assert site.action == "remove" and site.services["openstack", "keystone"].version == ""


@pytest.mark.parametrize("entry, message", [
    ({"version": "1"}, "services[0] has no service name: give each entry a service (the host's service var, "
                       "or its inventory hostname)"),
    ({"service": " ", "version": "1"}, "services[0] has no service name"),
    ("keystone", "services[0] has no service name"),
    ({"service": "keystone"}, "keystone has no version: set the host var version (the version it deploys, e.g. 2025.1)"),
    ({"service": "keystone", "version": 2025.1}, 'keystone: version 2025.1 is a number: quote it (version: "2025.1"); '
                                                 "unquoted, 2025.10 reads as 2025.1"),
    ({"service": "keystone", "version": "1", "depends_on": "mariadb"},
     "keystone: depends_on must be a list of dependencies, not 'mariadb'"),
    ({"service": "keystone", "version": "1", "expected_duration": "soon"},
     "keystone: expected_duration must be a whole number of seconds, not 'soon'"),
    ({"service": "keystone", "version": "1", "expected_duration": -5},
     "keystone: expected_duration must be a whole number of seconds, not -5"),
    ({"service": "keystone", "version": "1", "namespace": ["a"]}, "keystone: namespace must be a string, not ['a']"),
])
def test_an_entry_that_is_no_service(entry: Any, message: str) -> None:
    assert _refused([entry]).startswith(message)


def test_a_version_given_as_a_whole_number_is_text() -> None:
    assert parse_site([{"service": "mariadb", "version": 11}]).services["openstack", "mariadb"].version == "11"


def test_an_unknown_action() -> None:
    assert _refused([], action="upgrade") == "action must be one of deploy, remove, not 'upgrade'"


def test_an_empty_site_is_a_site() -> None:
    assert parse_site([]).services == {}


def test_planned_keys_leave_out_what_the_plan_does_not_read() -> None:
    keystone = OPENSTACK_HELM[3]
    assert planned_keys(keystone) == {"service": "keystone", "version": "2026.1",
                                      "depends_on": ["mariadb>=10.6", "memcached", "rabbitmq"], "expected_duration": 300}
    assert planned_keys("not a dict") == "not a dict"
