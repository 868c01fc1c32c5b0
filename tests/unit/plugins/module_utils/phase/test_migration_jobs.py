"""plugins/module_utils/phase/migration_jobs.py: Jobs made from the chart's own
db-sync Job (openstack-helm keystone's render, fixtures/openstack_helm), with
the command replaced, run once each, reading copies of the new release's config."""

from __future__ import annotations

from typing import Dict, List

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.common import openstack_upgrade
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.helm import render
from ansible_collections.lcm.openstack.plugins.module_utils.phase import migration_jobs, selection
from support.paths import UNIT_FIXTURES

RENDERED = render.parse_manifest((UNIT_FIXTURES / "openstack_helm" / "keystone.out").read_text())


def _jobs(step: str, chart: str = "keystone") -> List[Dict]:
    return openstack_upgrade.steps(chart).jobs[step]


def _by_key(objects: List[render.Rendered]) -> Dict[str, render.Rendered]:
    return {r.key: r for r in objects}


def test_a_check_job_is_the_db_sync_job_with_the_command_replaced() -> None:
    made = _by_key(migration_jobs.derive(RENDERED, "check", _jobs("check")))
    source = migration_jobs.db_sync_job(RENDERED).obj
    job = made["Job/keystone-db-sync-check"].obj
    pod, base = job["spec"]["template"]["spec"], source["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["command"] == ["keystone-status", "upgrade", "check"] and "args" not in container
    assert container["image"] == base["containers"][0]["image"]  # the new release's image
    assert pod["initContainers"] == base["initContainers"]  # it waits for what the db-sync waits for
    assert pod["serviceAccountName"] == base["serviceAccountName"]
    assert [m["mountPath"] for m in container["volumeMounts"]] == [m["mountPath"] for m in base["containers"][0]["volumeMounts"]]
    # One run: its exit code is the pod's, and its output is kept.
    assert pod["restartPolicy"] == "Never" and job["spec"]["backoffLimit"] == 0
    assert container["terminationMessagePolicy"] == "FallbackToLogsOnError"
    assert job["spec"]["podFailurePolicy"]["rules"] == [{"action": "FailJob", "onExitCodes": {
        "containerName": container["name"], "operator": "NotIn", "values": [0]}}]
    annotations = job["metadata"]["annotations"]
    assert annotations["lifecycle.openstack.org/exit-codes"] == "warning=1"
    assert not any(k.startswith("helm.sh/") for k in annotations)  # no Helm hook: a phase's own Job


def test_it_reads_copies_of_the_new_release_config_never_the_running_service_objects() -> None:
    made = migration_jobs.derive(RENDERED, "check", _jobs("check"))
    job = _by_key(made)["Job/keystone-db-sync-check"].obj
    read = selection.pod_references(job)
    originals = {(k, n) for k, n in selection.pod_references(migration_jobs.db_sync_job(RENDERED).obj)
                 if k in ("Secret", "ConfigMap")}
    assert originals  # keystone-etc, keystone-bin, keystone-db-user, ...
    assert not read & originals
    copies = {r.key: r for r in made if r.kind in ("Secret", "ConfigMap")}
    for kind, name in originals:
        copy = copies[f"{kind}/{name}-check"].obj
        assert (kind, f"{name}-check") in read
        assert copy["metadata"]["annotations"]["lifecycle.openstack.org/copy-of"] == name
        source = next(r.obj for r in RENDERED if r.kind == kind and r.name == name)
        assert copy.get("data") == source.get("data")  # the new release's content
        assert "meta.helm.sh/release-name" not in copy["metadata"].get("annotations", {})


def test_several_commands_run_one_after_the_other_online_migrations_repeat() -> None:
    jobs = _jobs("online", "nova") + [dict(j, step="contract") for j in _jobs("expand", "nova")]
    made = [r for r in migration_jobs.derive(RENDERED, "contract", jobs) if r.kind == "Job"]
    assert [(r.name, r.wave) for r in made] == [
        ("keystone-db-sync-online", (200,)), ("keystone-db-sync-expand-1", (300,)), ("keystone-db-sync-expand-2", (301,))]
    online = made[0].obj
    assert online["spec"]["backoffLimit"] == openstack_upgrade.ONLINE_ATTEMPTS - 1
    assert online["spec"]["podFailurePolicy"]["rules"][0]["onExitCodes"]["values"] == [0, 1]
    assert online["metadata"]["annotations"]["lifecycle.openstack.org/exit-codes"] == "repeat=1"


def test_a_check_or_expand_runs_instead_of_the_db_sync_a_contract_after_it() -> None:
    chosen = selection.select(RENDERED, "upgrade", "templates", None, "openstack")
    keys = [r.key for r in migration_jobs.chosen(chosen, RENDERED, "upgrade", _jobs("expand"))]
    assert "Job/keystone-db-sync" not in keys and "Job/keystone-db-sync-expand" in keys
    contract = selection.select(RENDERED, "contract", "templates", None, "openstack")
    made = migration_jobs.chosen(contract, RENDERED, "contract", _jobs("contract"))
    ordered = sorted((r for r in made if r.kind == "Job"), key=lambda r: r.wave)
    assert [r.name for r in ordered] == ["keystone-db-sync", "keystone-db-sync-contract"]


def test_a_chart_without_a_db_sync_job_is_told_what_to_do() -> None:
    without = [r for r in RENDERED if r.source != migration_jobs.DB_SYNC_TEMPLATE]
    with pytest.raises(PhaseError, match="manifests.job_db_sync.*update_strategy: drain"):
        migration_jobs.derive(without, "check", _jobs("check"))


def test_an_unknown_step_is_refused() -> None:
    with pytest.raises(PhaseError, match="step 'later' is not one of check, expand, online, contract"):
        migration_jobs.derive(RENDERED, "check", [dict(_jobs("check")[0], step="later")])
