"""plugins/module_utils/lifecycle/site_member.py: a record's place in a site."""

from __future__ import annotations

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.site_member import (
    SiteMember, differs, site_metadata,
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
    with pytest.raises(PhaseError, match="site.name is required"):
        SiteMember.given({"level": 1})
