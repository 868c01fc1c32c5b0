"""plugins/module_utils/phase/apply.py: one object of a phase brought to what
the chart renders: created, updated or left unchanged by one server-side
apply, owned by the Phase or not (ownership.decide), refused with the
apiserver's reason, and what a dry run would create remembered for the
waves after it."""

from __future__ import annotations

import copy
from typing import Any, Dict, List, Optional

import pytest
from support.fake_api import Answer, Kinds, status_error

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.phase.apply import Applier, actions
from ansible_collections.lcm.openstack.plugins.module_utils.phase.ownership import owner_reference

PHASE = {"metadata": {"name": "keystone-install-0a1b2c3d", "uid": "p-1"}}
LABELS = {"lifecycle.openstack.org/phase": "keystone-install-0a1b2c3d", "lifecycle.openstack.org/service": "keystone"}


class _Res:
    """One kind in memory: an apply that changes something bumps the
    resourceVersion, one that changes nothing does not, as the apiserver."""

    def __init__(self, kind: str, namespaced: bool = True, refuse: Optional[Exception] = None) -> None:
        self.kind, self.name, self.namespaced, self.refuse = kind, kind.lower() + "s", namespaced, refuse
        self.objects: Dict[str, Dict[str, Any]] = {}
        self.applies: List[Dict[str, Any]] = []
        self.version = 0

    def get(self, name: str, namespace: str, **_kw: Any) -> Answer:
        if name not in self.objects:
            raise status_error(404, "NotFound", f'{self.name} "{name}" not found')
        return Answer(self.objects[name])

    def server_side_apply(self, body: Dict[str, Any], name: str, namespace: str, **kwargs: Any) -> Answer:
        self.applies.append(dict(kwargs, body=body))
        if self.refuse:
            raise self.refuse
        before = self.objects.get(name)
        stored = copy.deepcopy(body)
        if before is not None and {k: v for k, v in before.items() if k != "metadata"} == \
                {k: v for k, v in stored.items() if k != "metadata"}:
            return Answer(before)
        self.version += 1
        stored["metadata"]["resourceVersion"] = str(self.version)
        if kwargs.get("dry_run"):
            return Answer(stored)
        self.objects[name] = stored
        return Answer(stored)


def _configmap(data: str = "a") -> Dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "keystone-bin"}, "data": {"x": data}}


@pytest.fixture
def configmaps() -> _Res:
    return _Res("ConfigMap")


def test_a_new_object_is_created_in_the_phase_namespace_labelled_and_owned(configmaps: _Res) -> None:
    applier = Applier(Kinds(configmaps), "openstack")
    done = applier.apply(_configmap(), owner_reference(PHASE), LABELS)
    assert (done.action, done.changed, done.owned) == ("created", True, True)
    stored = configmaps.objects["keystone-bin"]
    assert stored["metadata"]["namespace"] == "openstack" and LABELS.items() <= stored["metadata"]["labels"].items()
    assert stored["metadata"]["ownerReferences"][0]["uid"] == "p-1"
    assert configmaps.applies[0]["field_manager"] == "lcm.openstack" and configmaps.applies[0]["force_conflicts"] is True


def test_the_same_object_again_is_unchanged_and_a_new_content_updated(configmaps: _Res) -> None:
    applier = Applier(Kinds(configmaps), "openstack")
    applier.apply(_configmap(), owner_reference(PHASE), LABELS)
    again = applier.apply(_configmap(), owner_reference(PHASE), LABELS)
    assert (again.action, again.changed) == ("unchanged", False)
    changed = applier.apply(_configmap("b"), owner_reference(PHASE), LABELS)
    assert changed.action == "updated" and changed.before["data"] == {"x": "a"} and changed.after["data"] == {"x": "b"}


def test_a_dry_run_writes_nothing_and_remembers_what_it_would_create(configmaps: _Res) -> None:
    applier = Applier(Kinds(configmaps), "openstack", dry_run=True)
    done = applier.apply(_configmap(), owner_reference(PHASE), LABELS)
    assert done.action == "created" and configmaps.objects == {}
    assert configmaps.applies[0]["dry_run"] == "All" and ("ConfigMap", "keystone-bin") in applier.planned


def test_a_cluster_scoped_object_is_created_without_an_owner_and_another_namespace_is_refused() -> None:
    """nova's bootstrap Job comes with a ClusterRole: a namespaced Phase cannot own it
    (the garbage collector would take it), so it is created without one, labelled."""
    roles = _Res("ClusterRole", namespaced=False)
    done = Applier(Kinds(roles), "openstack").apply(
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "nova-bootstrap"}},
        owner_reference(PHASE), LABELS)
    (applied,) = roles.applies
    assert "namespace" not in applied["body"]["metadata"] and "ownerReferences" not in applied["body"]["metadata"]
    assert applied["body"]["metadata"]["labels"] == LABELS
    assert not done.owned and done.note.startswith("created without an owner")
    configmaps = _Res("ConfigMap")
    other = _configmap()
    other["metadata"]["namespace"] = "glance"
    with pytest.raises(PhaseError, match="rendered for namespace glance, but the phase runs in openstack"):
        Applier(Kinds(configmaps), "openstack").apply(other, None, LABELS)
    assert configmaps.applies == []


def test_an_object_the_apiserver_refuses_is_named_with_its_reason() -> None:
    refused = _Res("ConfigMap", refuse=status_error(422, "Invalid", 'ConfigMap "keystone-bin" is invalid: data[x y]: Invalid value'))
    with pytest.raises(PhaseError) as err:
        Applier(Kinds(refused), "openstack").apply(_configmap(), owner_reference(PHASE), LABELS)
    assert str(err.value).startswith("the apiserver refused ConfigMap keystone-bin: ")
    assert "Invalid value" in str(err.value)


def test_what_the_module_returns_for_each_object(configmaps: _Res) -> None:
    applier = Applier(Kinds(configmaps), "openstack")
    done = [applier.apply(_configmap(), owner_reference(PHASE), LABELS)]
    out = actions(done)
    assert out[0]["kind"] == "ConfigMap" and out[0]["name"] == "keystone-bin" and out[0]["action"] == "created"
    assert out[0]["owned"] is True and out[0]["reason"]
