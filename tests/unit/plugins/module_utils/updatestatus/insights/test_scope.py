"""plugins/module_utils/updatestatus/insights/scope.py: objects sorted to the
service they belong to, by label or Helm release; the Phases of the running
flows."""

from __future__ import annotations

from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import parse_time
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights import Snapshot
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.scope import Scope
from support.update_status import load, snapshot, uids


def test_an_object_belongs_to_its_service_by_label_or_by_release() -> None:
    snap = snapshot("upgrade_progressing")
    scope = Scope(snap)
    keystone = next(s for s in scope.services if s.service == "keystone")
    labelled = {"kind": "Job", "metadata": {"namespace": keystone.namespace, "name": "x",
                                            "labels": {"lifecycle.openstack.org/service": "keystone"}}}
    released = {"kind": "Deployment", "metadata": {"namespace": keystone.namespace, "name": "y",
                                                   "annotations": {"meta.helm.sh/release-name": keystone.release}}}
    stranger = {"kind": "Deployment", "metadata": {"namespace": keystone.namespace, "name": "z"}}
    elsewhere = {"kind": "Job", "metadata": {"namespace": "not-" + keystone.namespace, "name": "x",
                                             "labels": {"lifecycle.openstack.org/service": "keystone"}}}
    assert scope.service_of(labelled) is keystone and scope.service_of(released) is keystone
    assert scope.service_of(stranger) is None and scope.service_of(elsewhere) is None


def test_a_phase_of_the_running_flow_counts_before_the_flow_lists_it() -> None:
    # The phase engine creates the Phase, then adds it to the flow's phases.
    doc = load("backups")
    for obj in doc["objects"]:
        if obj["kind"] == "ServiceLifecycle" and obj["metadata"]["name"] == "keystone":
            obj["status"]["flow"]["phases"] = []
        if obj["kind"] == "Phase" and obj["metadata"]["name"] == "keystone-upgrade-1":
            obj["spec"]["flow"] = "update/2026-11-22T05:09:00Z"
    snap = Snapshot.from_objects(doc["objects"], parse_time(doc["now"]))
    (phase,) = [p for p in snap.phases if p["metadata"]["name"] == "keystone-upgrade-1"]
    assert Scope(snap).is_current(phase)
    assert "keystone-upgrade-1" in uids(snap)
