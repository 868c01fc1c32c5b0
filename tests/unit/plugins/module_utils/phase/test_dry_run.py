"""plugins/module_utils/phase/dry_run.py: the refusals a dry run makes for an
object an earlier wave of the same phase creates, told from real refusals."""

from __future__ import annotations

from support.fake_api import status_error

from ansible_collections.lcm.openstack.plugins.module_utils.phase.dry_run import planned_account, planned_role

BINDING = {"kind": "RoleBinding", "metadata": {"name": "keystone-db-init"},
           "roleRef": {"kind": "Role", "name": "keystone-openstack-db-init"}}
POD = {"kind": "Pod", "metadata": {"name": "keystone-test"}, "spec": {"serviceAccountName": "keystone-test"}}
NO_ACCOUNT = ('pods "keystone-test" is forbidden: error looking up service account '
              'openstack/keystone-test: serviceaccount "keystone-test" not found')
DENIED = ('pods "keystone-test" is forbidden: User "system:serviceaccount:openstack:lcm-runner" '
          'cannot create resource "pods" in API group "" in the namespace "openstack"')


def test_a_binding_to_a_role_the_phase_creates_is_named() -> None:
    missing = status_error(404, "NotFound", 'roles.rbac.authorization.k8s.io "keystone-openstack-db-init" not found')
    assert planned_role({("Role", "keystone-openstack-db-init")}, BINDING, missing) == "keystone-openstack-db-init"


def test_a_binding_to_a_role_nobody_creates_or_refused_otherwise_is_not() -> None:
    missing = status_error(404, "NotFound", "not found")
    assert planned_role(set(), BINDING, missing) == ""
    assert planned_role({("Role", "keystone-openstack-db-init")}, BINDING, status_error(422, "Invalid", "bad")) == ""
    assert planned_role({("Role", "keystone-openstack-db-init")}, dict(POD), missing) == ""


def test_a_pod_whose_account_the_phase_creates_is_named() -> None:
    assert planned_account({("ServiceAccount", "keystone-test")}, POD, status_error(403, "Forbidden", NO_ACCOUNT)) \
        == "keystone-test"


def test_a_pod_refused_to_the_credentials_or_for_an_account_nobody_creates_is_not() -> None:
    assert planned_account({("ServiceAccount", "keystone-test")}, POD, status_error(403, "Forbidden", DENIED)) is None
    assert planned_account(set(), POD, status_error(403, "Forbidden", NO_ACCOUNT)) is None
    assert planned_account({("ServiceAccount", "keystone-test")}, POD, status_error(422, "Invalid", "bad")) is None
