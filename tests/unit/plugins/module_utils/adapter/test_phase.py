"""plugins/module_utils/adapter/phase.py: what the diff shows."""

from __future__ import annotations

from types import SimpleNamespace

from ansible_collections.lcm.openstack.plugins.module_utils.adapter.phase import diffs


def test_the_diff_shows_only_what_changes_with_its_action() -> None:
    same = SimpleNamespace(key="ConfigMap/keystone-etc", action="unchanged", before={"a": 1}, after={"a": 1})
    new = SimpleNamespace(key="Job/keystone-db-sync", action="created", before=None, after={"kind": "Job"})
    out = diffs([same, new])
    assert out == [{"before_header": "Job/keystone-db-sync (live)", "after_header": "Job/keystone-db-sync (created)",
                    "before": "", "after": "kind: Job\n"}]
