"""plugins/module_utils/updatestatus/insights/base.py: the snapshot keeps what
the producers need and no more; an insight's uid is stable for one problem of
one object and differs for any other."""

from __future__ import annotations

from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.base import first_time, insight_uid
from support.update_status import snapshot


def test_helm_records_keep_their_metadata_only() -> None:
    snap = snapshot("upgrade_progressing")
    assert snap.releases and all(set(s) == {"apiVersion", "kind", "metadata"} for s in snap.releases)


def test_the_uid_hashes_the_problem_and_the_object_never_text_or_time() -> None:
    uid = insight_uid("pods", "openstack", "Pod", "keystone-api-1", "crashloop")
    assert uid.startswith("pods-") and len(uid) == len("pods-") + 16
    assert uid == insight_uid("pods", "openstack", "Pod", "keystone-api-1", "crashloop")
    others = {insight_uid("jobs", "openstack", "Pod", "keystone-api-1", "crashloop"),
              insight_uid("pods", "glance", "Pod", "keystone-api-1", "crashloop"),
              insight_uid("pods", "openstack", "Job", "keystone-api-1", "crashloop"),
              insight_uid("pods", "openstack", "Pod", "keystone-api-2", "crashloop"),
              insight_uid("pods", "openstack", "Pod", "keystone-api-1", "image")}
    assert uid not in others and len(others) == 5


def test_the_first_timestamp_among_values() -> None:
    assert first_time(None, "", "2026-11-24T03:00:00Z", "2026-11-24T04:00:00Z").isoformat() == "2026-11-24T03:00:00+00:00"
    assert first_time(None, "not a time") is None
