"""plugins/module_utils/lifecycle/site_member.py: a record's place in a site."""

from __future__ import annotations

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LifecycleError
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.site_member import (
    SiteMember, differs, provided_by_site, site_metadata,
)

RECORD = {"metadata": {
    "labels": {"lifecycle.openstack.org/service": "keystone", "lifecycle.openstack.org/site": "example"},
    "annotations": {"lifecycle.openstack.org/site-level": "1", "lifecycle.openstack.org/site-run": "2026-02-01T00:00:00Z",
                    "lifecycle.openstack.org/site-expected-seconds": "120", "kubectl.kubernetes.io/last-applied": "{}"}}}


def test_only_the_site_metadata_is_carried_over() -> None:
    assert site_metadata(RECORD) == {
        "labels": {"lifecycle.openstack.org/site": "example"},
        "annotations": {"lifecycle.openstack.org/site-level": "1",
                        "lifecycle.openstack.org/site-run": "2026-02-01T00:00:00Z",
                        "lifecycle.openstack.org/site-expected-seconds": "120"}}
    assert site_metadata(None) == {"labels": {}, "annotations": {}}


def test_differs_compares_what_the_member_gives() -> None:
    same = SiteMember("example", 1, "2026-02-01T00:00:00Z", 120)
    assert not differs(RECORD, same)
    assert not differs(RECORD, SiteMember("example", 1, "", 120))  # no run given: the record's stays
    assert differs(RECORD, SiteMember("example", 2, "", 120))
    assert differs(RECORD, SiteMember("other", 1, "", 120))
    assert differs(RECORD, SiteMember("example", 1, "2026-03-01T00:00:00Z", 120))
    assert differs({}, same) and not differs(RECORD, None)


def test_given_reads_the_option_and_defaults() -> None:
    assert SiteMember.given(None) is None
    assert SiteMember.given({"name": "example"}) == SiteMember("example", 0, "", 60)
    member = SiteMember.given({"name": "example", "level": 2, "run": "2026-02-01T00:00:00Z", "expected_duration": 0})
    assert member.annotations()["lifecycle.openstack.org/site-expected-seconds"] == "0"
    with pytest.raises(LifecycleError, match="site.name is required"):
        SiteMember.given({"level": 1})


def test_what_a_flow_beside_it_creates_is_recorded_and_read_back() -> None:
    member = SiteMember.given({"name": "example", "provided": [
        {"kind": "Service", "namespace": "openstack", "name": "nova-api", "service": "nova"},
        {"kind": "Service", "namespace": "openstack", "name": "nova-metadata", "service": "nova"}]})
    assert member is not None
    record = {"metadata": {"labels": member.labels(), "annotations": member.annotations()}}
    assert provided_by_site(record) == {("Service", "openstack", "nova-api"): "nova",
                                        ("Service", "openstack", "nova-metadata"): "nova"}
    assert not differs(record, member) and differs(RECORD, member)
    # A record written before the annotation existed is the same as one with nothing provided.
    assert not differs(RECORD, SiteMember("example", 1, "", 120))
    assert provided_by_site(RECORD) == {} and provided_by_site(None) == {}
    assert provided_by_site({"metadata": {"annotations": {"lifecycle.openstack.org/site-provided": "not json"}}}) == {}


def test_provided_must_be_a_list_of_objects() -> None:
    with pytest.raises(LifecycleError, match="site.provided is a list"):
        SiteMember.given({"name": "example", "provided": "nova-api"})
