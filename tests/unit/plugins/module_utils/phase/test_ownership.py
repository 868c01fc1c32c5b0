"""plugins/module_utils/phase/ownership.py and its use in apply.py: a Phase owns only
what it created for its own run and that nothing else uses.

The decide() cases are in fixtures/ownership/decisions.yaml; the chart cases
run on the real openstack-helm keystone render (fixtures/openstack_helm/).
"""

from __future__ import annotations

import copy
import json
from typing import Any, Dict, List, Optional, Tuple

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.helm import render
from ansible_collections.lcm.openstack.plugins.module_utils.phase import apply, ownership
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError, PhaseError
from support.paths import UNIT_FIXTURES

FIXTURES = UNIT_FIXTURES
CASES = yaml.safe_load((FIXTURES / "ownership" / "decisions.yaml").read_text())
KEYSTONE = FIXTURES / "openstack_helm" / "keystone.out"


def _users(case: Dict[str, Any]) -> Dict[Tuple[str, str], List[str]]:
    return {tuple(k.split("/", 1)): v for k, v in (case.get("users") or {}).items()}


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in CASES])
def test_decide(case: Dict[str, Any]) -> None:
    assert set(case) <= {"name", "desired", "live", "users", "service", "expect"}
    expect = case["expect"]
    args = (case["desired"], case.get("live"), _users(case), case.get("service", ""))
    if "error_contains" in expect:
        with pytest.raises(PhaseError) as err:
            ownership.decide(*args)
        for text in expect["error_contains"]:
            assert text in str(err.value)
        return
    decision = ownership.decide(*args)
    assert decision.action == expect["action"], decision.reason
    assert decision.owned == (expect["action"] == ownership.OWN)
    wanted = expect.get("reason_contains", [])
    for text in [wanted] if isinstance(wanted, str) else wanted:
        assert text in decision.reason


def test_the_cases_cover_every_action() -> None:
    actions = {c["expect"].get("action") for c in CASES}
    assert actions >= {ownership.OWN, ownership.UNOWNED, ownership.SHARE, ownership.RELEASE}


# -- the real keystone chart ------------------------------------------------------

def _keystone() -> List[render.Rendered]:
    return render.parse_manifest(KEYSTONE.read_text())


def test_keystone_workloads_use_the_fernet_and_credential_keys() -> None:
    users = ownership.workload_users(r.obj for r in _keystone())
    assert users[("Secret", "keystone-fernet-keys")] == ["Deployment/keystone-api"]
    assert "Deployment/keystone-api" in users[("Secret", "keystone-credential-keys")]
    assert users[("Secret", "keystone-etc")] == ["CronJob/keystone-credential-rotate",
                                                 "CronJob/keystone-fernet-rotate", "Deployment/keystone-api"]
    assert users[("ServiceAccount", "keystone-api")] == ["Deployment/keystone-api"]
    # the RBAC of a workload's account is the workload's too
    assert users[("RoleBinding", "keystone-openstack-keystone-api")] == ["Deployment/keystone-api"]
    assert users[("Role", "keystone-openstack-keystone-api")] == ["Deployment/keystone-api"]
    # a job's own account is not a workload's
    assert ("ServiceAccount", "keystone-db-sync") not in users


def test_no_keystone_object_the_api_uses_is_ever_owned() -> None:
    """Whatever the cluster holds (nothing, or a Phase's copy), no object the
    running keystone-api or its CronJobs use ends up owned by a Phase."""
    rendered = _keystone()
    users = ownership.workload_users(r.obj for r in rendered)
    used = set(users)
    phase_copy = {"ownerReferences": [{"kind": "Phase", "name": "old", "uid": "u", "controller": True}]}
    for r in rendered:
        if r.kind not in ownership.CONFIG_KINDS:
            continue
        live_by_phase = copy.deepcopy(r.obj)
        live_by_phase.setdefault("metadata", {}).update(phase_copy)
        for live in (None, r.obj, live_by_phase):
            decision = ownership.decide(r.obj, live, users)
            if (r.kind, r.name) in used or r.source.startswith("templates/secret-fernet") \
                    or r.source.startswith("templates/secret-credential-keys"):
                assert not decision.owned, (r.key, decision.reason)


def test_keystone_job_config_is_owned_when_the_phase_creates_it() -> None:
    by_key = {r.key: r for r in _keystone()}
    users = ownership.workload_users(r.obj for r in by_key.values())
    for key in ("ServiceAccount/keystone-db-sync", "Role/keystone-openstack-keystone-db-sync",
                "RoleBinding/keystone-openstack-keystone-db-sync"):
        decision = ownership.decide(by_key[key].obj, None, users)
        assert decision.owned, (key, decision.reason)


# -- Applier: what reaches the cluster ---------------------------------------------

class _Obj:
    def __init__(self, data: Dict[str, Any]) -> None:
        self.data = data

    def to_dict(self) -> Dict[str, Any]:
        return copy.deepcopy(self.data)


class _Res:
    """One kind of a fake cluster: get, server-side apply and patch, recorded."""

    namespaced = True

    def __init__(self, kind: str, live: Dict[str, Dict[str, Any]]) -> None:
        self.kind, self.name, self.live = kind, kind.lower() + "s", live
        self.applied: List[Dict[str, Any]] = []
        self.patched: List[Tuple[str, Dict[str, Any], str]] = []

    def get(self, name: str, namespace: str, **_kw: Any) -> _Obj:
        from kubernetes.dynamic.exceptions import NotFoundError
        from kubernetes.client.rest import ApiException
        if name not in self.live:
            raise NotFoundError(ApiException(status=404))
        return _Obj(self.live[name])

    def server_side_apply(self, body: Dict[str, Any], name: str, **_: Any) -> _Obj:
        self.applied.append(copy.deepcopy(body))
        out = copy.deepcopy(body)
        out["metadata"]["resourceVersion"] = "2"
        return _Obj(out)

    def patch(self, body: Dict[str, Any], name: str, content_type: str, **_: Any) -> _Obj:
        self.patched.append((name, copy.deepcopy(body), content_type))
        return _Obj(self.live[name])


class _Dyn:
    def __init__(self, res: _Res) -> None:
        self.resources, self.res = self, res

    def get(self, api_version: str, kind: str) -> _Res:
        return self.res


OWNER = {"apiVersion": "lifecycle.openstack.org/v1alpha1", "kind": "Phase", "name": "ks-install-x",
         "uid": "phase-uid", "controller": True, "blockOwnerDeletion": True}
LABELS = {"lifecycle.openstack.org/phase": "ks-install-x", "lifecycle.openstack.org/service": "keystone"}


def _applier(kind: str, live: Optional[Dict[str, Any]] = None,
             users: Optional[Dict[Tuple[str, str], List[str]]] = None) -> Tuple[apply.Applier, _Res]:
    res = _Res(kind, {live["metadata"]["name"]: live} if live else {})
    return apply.Applier(_Dyn(res), "openstack", users=users), res


FERNET = {"apiVersion": "v1", "kind": "Secret",
          "metadata": {"name": "keystone-fernet-keys",
                       "annotations": {"helm.sh/hook": "pre-install", "helm.sh/resource-policy": "keep"}}}


def test_an_absent_keep_policy_hook_secret_is_created_without_an_owner() -> None:
    applier, res = _applier("Secret")
    result = applier.apply(FERNET, OWNER, LABELS)
    (body,) = res.applied
    assert "ownerReferences" not in body["metadata"]
    assert (result.action, result.owned) == ("created", False)
    assert "created without an owner" in result.reason and result.note == result.reason


def test_a_live_keep_policy_secret_is_used_as_it_is() -> None:
    live = copy.deepcopy(FERNET)
    live["data"] = {"0": "cm90YXRlZA=="}
    applier, res = _applier("Secret", live)
    result = applier.apply(FERNET, OWNER, LABELS)
    assert res.applied == [] and res.patched == []
    assert (result.action, result.owned, result.changed) == ("shared", False, False)


def test_a_keep_policy_secret_a_phase_took_is_released_content_untouched() -> None:
    live = copy.deepcopy(FERNET)
    live["metadata"].update(resourceVersion="7", ownerReferences=[
        {"kind": "Phase", "name": "old", "uid": "u1", "controller": True},
        {"kind": "ConfigMap", "name": "anchor", "uid": "u2"}])
    live["data"] = {"0": "cm90YXRlZA=="}
    applier, res = _applier("Secret", live)
    result = applier.apply(FERNET, OWNER, LABELS)
    assert res.applied == []  # the content is never re-applied
    ((name, patch, content_type),) = res.patched
    assert name == "keystone-fernet-keys" and content_type == "application/merge-patch+json"
    assert patch == {"metadata": {"ownerReferences": [{"kind": "ConfigMap", "name": "anchor", "uid": "u2"}],
                                  "resourceVersion": "7"}}
    assert (result.action, result.released, result.changed, result.owned) == ("shared", True, True, False)
    assert "released from Phase old" in result.note


def test_the_last_phase_owner_reference_released_clears_the_list() -> None:
    live = {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "keystone-etc", "resourceVersion": "3",
                         "ownerReferences": [{"kind": "Phase", "name": "old", "uid": "u1", "controller": True}]}}
    applier, res = _applier("ConfigMap", live, {("ConfigMap", "keystone-etc"): ["Deployment/keystone-api"]})
    applier.apply(live, OWNER, LABELS)
    assert res.patched[0][1]["metadata"]["ownerReferences"] is None


def test_a_new_job_config_object_is_owned() -> None:
    applier, res = _applier("ServiceAccount")
    result = applier.apply({"apiVersion": "v1", "kind": "ServiceAccount",
                            "metadata": {"name": "keystone-db-sync"}}, OWNER, LABELS)
    assert res.applied[0]["metadata"]["ownerReferences"] == [OWNER]
    assert res.applied[0]["metadata"]["labels"] == LABELS
    assert (result.action, result.owned) == ("created", True)


def test_a_config_object_a_workload_mounts_is_created_without_owner() -> None:
    applier, res = _applier("ConfigMap", users={("ConfigMap", "keystone-etc"): ["Deployment/keystone-api"]})
    result = applier.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "keystone-etc"}},
                           OWNER, LABELS)
    assert "ownerReferences" not in res.applied[0]["metadata"]
    assert not result.owned and "used by Deployment/keystone-api" in result.reason


# -- dry run: objects that depend on others of the same phase -------------------------

SA_REFUSAL = ('pods "keystone-test" is forbidden: error looking up service account openstack/keystone-test: '
              'serviceaccount "keystone-test" not found')


class _AdmissionRes(_Res):
    """Pods whose ServiceAccount the cluster lacks are refused as admission does."""

    def __init__(self, kind: str, accounts: List[str]) -> None:
        super().__init__(kind, {})
        self.accounts = accounts

    def server_side_apply(self, body: Dict[str, Any], name: str, **kw: Any) -> _Obj:
        if body["kind"] == "Pod" and body["spec"].get("serviceAccountName", "default") not in self.accounts:
            from kubernetes.client.rest import ApiException
            from kubernetes.dynamic.exceptions import DynamicApiError
            exc = ApiException(status=403, reason="Forbidden")
            exc.body = json.dumps({"kind": "Status", "code": 403, "message": SA_REFUSAL.replace(
                "keystone-test", body["spec"].get("serviceAccountName", "default"))}).encode()
            raise DynamicApiError(exc)
        return super().server_side_apply(body, name, **kw)


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "keystone-test"},
       "spec": {"serviceAccountName": "keystone-test", "containers": [{"name": "c", "image": "i"}]}}
ACCOUNT = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "keystone-test"}}


def test_a_dry_run_validates_a_pod_whose_account_an_earlier_wave_creates() -> None:
    res = _AdmissionRes("Pod", accounts=["default"])
    dry = apply.Applier(_Dyn(res), "openstack", dry_run=True)
    assert dry.apply(ACCOUNT, OWNER, LABELS).action == "created"
    result = dry.apply(POD, OWNER, LABELS)
    assert result.action == "created"
    assert "validated with the default ServiceAccount in place of keystone-test" in result.note
    assert result.after["spec"]["serviceAccountName"] == "keystone-test"
    assert [b["spec"]["serviceAccountName"] for b in res.applied if b["kind"] == "Pod"] == ["default"]


def test_a_pod_whose_account_nobody_creates_keeps_the_admission_message() -> None:
    dry = apply.Applier(_Dyn(_AdmissionRes("Pod", accounts=["default"])), "openstack", dry_run=True)
    with pytest.raises(PhaseError) as err:
        dry.apply(POD, OWNER, LABELS)
    assert str(err.value) == f"the apiserver refused Pod keystone-test: {SA_REFUSAL}"
    assert "credentials" not in str(err.value)


def test_a_real_run_never_substitutes_the_account() -> None:
    applier = apply.Applier(_Dyn(_AdmissionRes("Pod", accounts=["default"])), "openstack")
    applier.planned.add(("ServiceAccount", "keystone-test"))
    with pytest.raises(PhaseError, match="error looking up service account"):
        applier.apply(POD, OWNER, LABELS)


class _EscalationRes(_Res):
    """RoleBindings of an account without `bind`: the apiserver reads the Role
    it binds to compare rules, and answers 404 while the Role is not there."""

    def __init__(self, kind: str, roles: List[str]) -> None:
        super().__init__(kind, {})
        self.roles = roles

    def server_side_apply(self, body: Dict[str, Any], name: str, **kw: Any) -> _Obj:
        if body["kind"] == "RoleBinding" and body["roleRef"]["name"] not in self.roles:
            from kubernetes.client.rest import ApiException
            from kubernetes.dynamic.exceptions import DynamicApiError
            exc = ApiException(status=404, reason="Not Found")
            exc.body = json.dumps({"kind": "Status", "code": 404, "reason": "NotFound", "message":
                                   f'roles.rbac.authorization.k8s.io "{body["roleRef"]["name"]}" not found'}).encode()
            raise DynamicApiError(exc)
        return super().server_side_apply(body, name, **kw)


ROLE = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": "keystone-openstack-keystone-db-sync"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}
BINDING = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
           "metadata": {"name": "keystone-openstack-keystone-db-sync"},
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                       "name": "keystone-openstack-keystone-db-sync"},
           "subjects": [{"kind": "ServiceAccount", "name": "keystone-db-sync"}]}


def test_a_dry_run_accepts_a_binding_to_a_role_an_earlier_wave_creates() -> None:
    dry = apply.Applier(_Dyn(_EscalationRes("RoleBinding", roles=[])), "openstack", dry_run=True)
    assert dry.apply(ROLE, OWNER, LABELS).action == "created"
    result = dry.apply(BINDING, OWNER, LABELS)
    assert result.action == "created"
    assert "binds the Role keystone-openstack-keystone-db-sync, which this phase creates" in result.note
    assert result.after["roleRef"] == BINDING["roleRef"]


def test_a_binding_to_a_role_nobody_creates_is_an_error() -> None:
    dry = apply.Applier(_Dyn(_EscalationRes("RoleBinding", roles=[])), "openstack", dry_run=True)
    with pytest.raises(KubeError, match="keystone-openstack-keystone-db-sync.* not found"):
        dry.apply(BINDING, OWNER, LABELS)


def test_a_real_run_never_skips_a_binding() -> None:
    applier = apply.Applier(_Dyn(_EscalationRes("RoleBinding", roles=[])), "openstack")
    applier.planned.add(("Role", "keystone-openstack-keystone-db-sync"))
    with pytest.raises(KubeError, match="not found"):
        applier.apply(BINDING, OWNER, LABELS)


# -- Jobs a running workload waits for ------------------------------------------------

def test_every_keystone_job_something_waits_for_is_found() -> None:
    """keystone-api and its CronJobs wait for three Jobs; db-sync waits for
    db-init, bootstrap for domain-manage."""
    waited = ownership.waited_jobs(r.obj for r in _keystone())
    assert waited == {
        ("Job", "keystone-db-sync"): ["Deployment/keystone-api (DEPENDENCY_JOBS)"],
        ("Job", "keystone-credential-setup"): ["CronJob/keystone-credential-rotate (DEPENDENCY_JOBS)",
                                               "Deployment/keystone-api (DEPENDENCY_JOBS)",
                                               "Job/keystone-db-sync (DEPENDENCY_JOBS)"],
        ("Job", "keystone-fernet-setup"): ["CronJob/keystone-fernet-rotate (DEPENDENCY_JOBS)",
                                           "Deployment/keystone-api (DEPENDENCY_JOBS)",
                                           "Job/keystone-db-sync (DEPENDENCY_JOBS)"],
        ("Job", "keystone-db-init"): ["Job/keystone-db-sync (DEPENDENCY_JOBS)"],
        ("Job", "keystone-domain-manage"): ["Job/keystone-bootstrap (DEPENDENCY_JOBS)"],
    }


KEYSTONE_WAITED_JOBS = {"keystone-db-sync", "keystone-credential-setup", "keystone-fernet-setup",
                        "keystone-db-init", "keystone-domain-manage"}


def test_only_the_keystone_jobs_something_waits_for_outlive_the_phase() -> None:
    """db-init is waited for by db-sync only: once the install Phase is
    deleted, the next upgrade's db-sync would wait for it forever, so it is
    created without an owner like the Jobs keystone-api waits for. A Job
    nothing waits for (rabbit-init, bootstrap) stays the Phase's."""
    rendered = _keystone()
    users = ownership.workload_users(r.obj for r in rendered)
    jobs = [r for r in rendered if r.kind == "Job"]
    owned = {r.name for r in jobs} - KEYSTONE_WAITED_JOBS
    assert owned >= {"keystone-rabbit-init", "keystone-bootstrap"}
    earlier = {"labels": {"lifecycle.openstack.org/phase-uid": "old"}}
    for r in jobs:
        live_copy = copy.deepcopy(r.obj)
        live_copy["metadata"].update(copy.deepcopy(earlier))
        for live in (None, live_copy):
            decision = ownership.decide(r.obj, live, users, "keystone")
            if r.name in KEYSTONE_WAITED_JOBS:
                assert decision.action == ownership.UNOWNED, (r.key, decision.reason)
                assert "(DEPENDENCY_JOBS)" in decision.reason and "deleting the Phase must leave it" in decision.reason
            else:
                assert decision.action == ownership.OWN, (r.key, decision.reason)
    db_init = next(r for r in jobs if r.name == "keystone-db-init")
    assert "Job/keystone-db-sync (DEPENDENCY_JOBS) waits for it" in ownership.decide(db_init.obj, None, users).reason


def _deployment_waiting(env: str, value: str) -> Dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api"},
            "spec": {"template": {"spec": {"initContainers": [{"name": "init", "env": [
                {"name": env, "value": value}]}], "containers": [{"name": "api"}]}}}}


def _job_obj(name: str, labels: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "labels": labels or {}}}


def test_a_job_named_by_labels_is_waited_for_too() -> None:
    objects = [_deployment_waiting("DEPENDENCY_JOBS_JSON", json.dumps([{"labels": {"component": "db-sync"}}])),
               _job_obj("svc-db-sync", {"component": "db-sync"}), _job_obj("svc-db-init", {"component": "db-init"})]
    assert ownership.waited_jobs(objects) == {("Job", "svc-db-sync"): ["Deployment/api (DEPENDENCY_JOBS_JSON)"]}


def test_a_job_only_another_job_waits_for_is_waited_for_too() -> None:
    waits = copy.deepcopy(_job_obj("svc-db-sync"))
    waits["spec"] = _deployment_waiting("DEPENDENCY_JOBS", "svc-db-init")["spec"]
    assert ownership.waited_jobs([waits, _job_obj("svc-db-init")]) == {
        ("Job", "svc-db-init"): ["Job/svc-db-sync (DEPENDENCY_JOBS)"]}


def test_a_job_that_names_itself_does_not_wait_for_itself() -> None:
    waits = copy.deepcopy(_job_obj("svc-db-sync"))
    waits["spec"] = _deployment_waiting("DEPENDENCY_JOBS", "svc-db-sync")["spec"]
    assert ownership.waited_jobs([waits]) == {}


def test_of_phase_knows_a_run_by_its_controller_or_its_uid_label() -> None:
    owned = {"metadata": {"ownerReferences": [dict(OWNER)]}}
    labelled = {"metadata": {"labels": {ownership.LABEL_PHASE_UID: "phase-uid"}}}
    assert ownership.of_phase(owned, "phase-uid") and ownership.of_phase(labelled, "phase-uid")
    assert not ownership.of_phase(owned, "other") and not ownership.of_phase(labelled, "other")
    assert not ownership.of_phase({"metadata": {}}, "")
    # a label cannot claim an object another controller holds
    taken = {"metadata": {"labels": {ownership.LABEL_PHASE_UID: "phase-uid"},
                          "ownerReferences": [{"kind": "CronJob", "uid": "c", "controller": True}]}}
    assert not ownership.of_phase(taken, "phase-uid")


class _JobRes(_Res):
    """Jobs: deleted and created (dry run) are recorded too."""

    def __init__(self, live: Dict[str, Dict[str, Any]]) -> None:
        super().__init__("Job", live)
        self.created: List[Dict[str, Any]] = []

    def create(self, body: Dict[str, Any], **_: Any) -> _Obj:
        self.created.append(copy.deepcopy(body))
        return _Obj(body)


WAITED = {("Job", "keystone-db-sync"): ["Deployment/keystone-api (DEPENDENCY_JOBS)"]}
DB_SYNC = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "keystone-db-sync"},
           "spec": {"template": {"spec": {"containers": [{"name": "db-sync", "image": "keystone"}]}}}}


def test_a_waited_job_is_created_without_owner_and_labelled_with_the_run() -> None:
    res = _JobRes({})
    result = apply.Applier(_Dyn(res), "openstack", users=WAITED).apply(DB_SYNC, OWNER, LABELS)
    (body,) = res.applied
    assert "ownerReferences" not in body["metadata"]
    assert body["metadata"]["labels"] == {**LABELS, "lifecycle.openstack.org/phase-uid": "phase-uid"}
    assert (result.action, result.owned) == ("created", False)
    assert "keystone-api (DEPENDENCY_JOBS) waits for it" in result.reason


def test_an_owned_job_carries_no_uid_label() -> None:
    res = _JobRes({})
    apply.Applier(_Dyn(res), "openstack").apply(DB_SYNC, OWNER, LABELS)
    assert res.applied[0]["metadata"]["ownerReferences"] == [OWNER]
    assert ownership.LABEL_PHASE_UID not in res.applied[0]["metadata"]["labels"]


def test_a_resumed_run_leaves_its_own_waited_job_alone() -> None:
    live = copy.deepcopy(DB_SYNC)
    live["metadata"]["labels"] = {**LABELS, "lifecycle.openstack.org/phase-uid": "phase-uid"}
    res = _JobRes({"keystone-db-sync": live})
    result = apply.Applier(_Dyn(res), "openstack", dry_run=True, users=WAITED).apply(DB_SYNC, OWNER, LABELS)
    assert result.action == "unchanged" and res.applied == [] and res.created == []


def test_a_later_run_replaces_the_waited_job_an_earlier_one_left() -> None:
    """The same Phase name after a Failed run was deleted: another uid."""
    live = copy.deepcopy(DB_SYNC)
    live["metadata"]["labels"] = {**LABELS, "lifecycle.openstack.org/phase-uid": "deleted-run"}
    res = _JobRes({"keystone-db-sync": live})
    result = apply.Applier(_Dyn(res), "openstack", dry_run=True, users=WAITED).apply(DB_SYNC, OWNER, LABELS)
    assert result.action == "replaced" and not result.owned
    (probe,) = res.created
    assert "ownerReferences" not in probe["metadata"]
    assert probe["metadata"]["labels"]["lifecycle.openstack.org/phase-uid"] == "phase-uid"
