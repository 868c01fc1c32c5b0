"""plugins/module_utils/phase/spec.py: the request, the Phase spec, its hash and its name."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any, Callable, Dict

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.phase import spec as spec_mod
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import PHASE_TYPES
from ansible_collections.lcm.openstack.plugins.module_utils.phase.spec import (
    PhaseRequest, Source, build_spec, digest, phase_body, phase_name, spec_hash,
)

CHART = "oci://registry.example/openstack-helm/keystone"
OBJECTS = [{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "keystone-db-sync"}}]
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def _req(type_: str = "install", **kw: Any) -> PhaseRequest:
    src = kw.pop("source", None) or Source(chart=CHART)
    return PhaseRequest(type=type_, service="keystone", release=kw.pop("release", "keystone"),
                        namespace="openstack", source=src, **kw)


def _hash(req: PhaseRequest, objects: Any = None) -> str:
    return spec_hash(build_spec(req, OBJECTS if objects is None else objects))


# -- validate ----------------------------------------------------------------------

@pytest.mark.parametrize("type_", PHASE_TYPES)
def test_validate_accepts_every_phase_type(type_: str) -> None:
    _req(type_).validate()


def test_validate_unknown_type() -> None:
    with pytest.raises(InputError) as err:
        _req("migrate").validate()
    assert "unknown phase type 'migrate'" in str(err.value)
    assert "install" in str(err.value) and "trafficrollout" in str(err.value)


@pytest.mark.parametrize("values", [["a", "b"], "image: x", 3])
def test_validate_values_must_be_a_mapping(values: Any) -> None:
    with pytest.raises(InputError) as err:
        _req(source=Source(chart=CHART, values=values)).validate()
    assert "source.values must be a mapping" in str(err.value)
    assert type(values).__name__ in str(err.value)


def test_validate_chart_required_unless_manifests() -> None:
    with pytest.raises(InputError) as err:
        _req(source=Source()).validate()
    assert "source.chart is required" in str(err.value)
    # a selection other than manifests needs a chart even with manifests given
    with pytest.raises(InputError):
        _req(source=Source(manifests=[OBJECTS[0]], selection="templates")).validate()
    _req(source=Source(manifests=[OBJECTS[0]])).validate()
    _req(source=Source(manifests=[])).validate()


@pytest.mark.parametrize("chart", ["./charts/keystone", "/nonexistent/charts/keystone", "../keystone-0.3.1.tgz",
                                   "openstack-helm/charts/keystone"])
def test_validate_local_chart_must_exist(chart: str) -> None:
    with pytest.raises(InputError) as err:
        _req(source=Source(chart=chart)).validate()
    assert f"chart {chart} does not exist" in str(err.value)


def test_validate_existing_local_chart(tmp_path: Path) -> None:
    chart = tmp_path / "keystone"
    chart.mkdir()
    _req(source=Source(chart=str(chart))).validate()


@pytest.mark.parametrize("chart", [CHART, "https://charts.example/keystone-0.3.1.tgz", "openstack-helm/keystone"])
def test_validate_remote_charts_are_not_looked_up(chart: str) -> None:
    _req(source=Source(chart=chart)).validate()


def test_validate_refuses_the_block_of_another_type() -> None:
    with pytest.raises(InputError) as err:
        _req("install", blocks={"upgrade": {"backup_database": True}}).validate()
    assert "option upgrade does not apply to a install phase" in str(err.value)


def test_validate_names_the_block_a_type_takes() -> None:
    with pytest.raises(InputError) as err:
        _req("trafficdrain", blocks={"upgrade": {"backup_database": True}}).validate()
    assert "its options go under traffic" in str(err.value)
    with pytest.raises(InputError) as err:
        _req("rollback", blocks={"uninstall": {"purge_database": True}}).validate()
    assert "option uninstall does not apply to a rollback phase; its options go under rollback" in str(err.value)


def test_validate_accepts_its_own_block_and_empty_others() -> None:
    _req("upgrade", blocks={"upgrade": {"backup_database": True}, "rollback": None, "uninstall": {},
                            "test": None, "traffic": None}).validate()
    _req("trafficrollout", blocks={"traffic": {"steps": [10, 50, 100]}}).validate()


def test_source_mode() -> None:
    assert Source(chart=CHART).mode == "templates"
    assert Source(manifests=[]).mode == "manifests"
    assert Source(chart=CHART, manifests=[]).mode == "templates"
    assert Source(chart=CHART, selection="stage").mode == "stage"


# -- build_spec ----------------------------------------------------------------------

def test_build_spec_fields(tmp_path: Path) -> None:
    req = _req("upgrade", target_version="2024.1", timeout=900,
               blocks={"upgrade": {"backup_database": True, "backup_timeout": None}},
               source=Source(chart=CHART, chart_version="0.3.1", values={"a": 1}, templates=["job-db-sync"]))
    spec = build_spec(req, OBJECTS)
    assert spec["type"] == "upgrade" and spec["service"] == "keystone" and spec["release"] == "keystone"
    assert spec["timeoutSeconds"] == 900 and spec["targetVersion"] == "2024.1"
    assert spec["upgrade"] == {"backupDatabase": True}
    src = spec["source"]
    assert src["selection"] == "templates" and src["chart"] == CHART and src["chartVersion"] == "0.3.1"
    assert src["templates"] == ["job-db-sync"]
    assert src["manifestsDigest"] == digest(OBJECTS)
    assert re.fullmatch(r"[0-9a-f]{64}", src["valuesDigest"])


def test_build_spec_without_chart_has_no_values_digest() -> None:
    spec = build_spec(_req(source=Source(manifests=OBJECTS)), OBJECTS)
    assert spec["source"] == {"selection": "manifests", "manifestsDigest": digest(OBJECTS)}
    assert "targetVersion" not in spec


def test_build_spec_block_only_of_its_own_type() -> None:
    spec = build_spec(_req("install", blocks={"upgrade": {"backup_database": True}}), OBJECTS)
    assert not any(k in spec for k in spec_mod.BLOCK_NAMES if k not in spec_mod.COMMON_BLOCKS)
    spec = build_spec(_req("trafficdrain", blocks={"traffic": {"backend": "service_selector",
                                                               "drain_grace_seconds": 30}}), OBJECTS)
    assert spec["traffic"] == {"backend": "service_selector", "drainGraceSeconds": 30}


def test_values_never_appear_in_the_spec(tmp_path: Path) -> None:
    values_file = tmp_path / "secrets.yaml"
    values_file.write_text("endpoints:\n  identity:\n    auth:\n      admin:\n        password: FileOnlySecret-77\n")
    values = {"endpoints": {"oslo_db": {"auth": {"admin": {"password": "InlineSecret-42"}}}},
              "conf": {"keystone": {"DEFAULT": {"debug": "UniqueMarkerValue"}}}}
    req = _req(source=Source(chart=CHART, values=values, values_files=[str(values_file)]))
    spec = build_spec(req, OBJECTS)
    text = json.dumps(spec)
    for leaked in ("InlineSecret-42", "FileOnlySecret-77", "UniqueMarkerValue", "oslo_db", "endpoints",
                   str(values_file)):
        assert leaked not in text
    assert "values" not in spec["source"] and "valuesFiles" not in spec["source"]
    assert spec["source"]["valuesDigest"] == spec_mod.values_digest(req.source)
    body = phase_body(req, spec, spec_hash(spec))
    assert "InlineSecret-42" not in json.dumps(body)


# -- spec_hash -------------------------------------------------------------------

VALUES = {"endpoints": {"identity": {"auth": {"admin": {"password": "pw-1", "region_name": "RegionOne"}}},
                        "oslo_db": {"hosts": {"default": "mariadb"}}},
          "pod": {"replicas": {"api": 2}},
          "manifests": {"job_db_sync": True, "job_bootstrap": True},
          "images": {"tags": ["a", "b"]}}


def _reordered(data: Any) -> Any:
    """The same mapping with every level's keys in reverse insertion order."""
    if isinstance(data, dict):
        return {k: _reordered(data[k]) for k in reversed(list(data))}
    if isinstance(data, list):
        return [_reordered(v) for v in data]
    return data


def test_hash_stable_across_dict_ordering() -> None:
    reordered = _reordered(VALUES)
    assert list(reordered) != list(VALUES) and reordered == VALUES
    objects = [{"kind": "Job", "apiVersion": "batch/v1", "metadata": {"name": "x", "labels": {"a": "1", "b": "2"}}}]
    h1 = _hash(_req(source=Source(chart=CHART, values=VALUES)), objects)
    h2 = _hash(_req(source=Source(chart=CHART, values=reordered)), _reordered(objects))
    assert h1 == h2
    assert re.fullmatch(r"[0-9a-f]{16}", h1)


def test_hash_is_deterministic() -> None:
    assert _hash(_req(source=Source(chart=CHART, values=VALUES))) == \
        _hash(_req(source=Source(chart=CHART, values=copy.deepcopy(VALUES))))


def _set(path: str, value: Any) -> Callable[[Dict[str, Any]], None]:
    def change(v: Dict[str, Any]) -> None:
        *parents, last = path.split(".")
        for p in parents:
            v = v[p]
        v[last] = value
    return change


@pytest.mark.parametrize("change", [
    pytest.param(_set("endpoints.identity.auth.admin.password", "pw-2"), id="nested-string"),
    pytest.param(_set("pod.replicas.api", 3), id="int"),
    pytest.param(lambda v: v["manifests"].pop("job_bootstrap"), id="removed-key"),
])
def test_values_change_the_hash_only_through_the_objects_they_render(
        change: Callable[[Dict[str, Any]], None]) -> None:
    """A values change that leaves the phase's objects alone is the same phase
    (raising the api replicas must not re-run db-sync); the spec still records it."""
    changed = copy.deepcopy(VALUES)
    change(changed)
    before, after = _req(source=Source(chart=CHART, values=VALUES)), _req(source=Source(chart=CHART, values=changed))
    assert _hash(before) == _hash(after)
    assert build_spec(before, OBJECTS)["source"]["valuesDigest"] != build_spec(after, OBJECTS)["source"]["valuesDigest"]
    rendered_differently = copy.deepcopy(OBJECTS)
    rendered_differently[0]["metadata"]["labels"] = {"changed": "yes"}
    assert _hash(before) != _hash(after, rendered_differently)


@pytest.mark.parametrize("other, same", [
    pytest.param(lambda: _req(source=Source(chart=CHART, values=VALUES, chart_version="0.3.2")), True,
                 id="chart-version"),
    pytest.param(lambda: _req(source=Source(chart=CHART + "2", values=VALUES)), True, id="chart-moved"),
    pytest.param(lambda: _req(source=Source(chart=CHART, values=VALUES), timeout=601), True, id="timeout"),
    pytest.param(lambda: _req(source=Source(chart=CHART, values=VALUES, templates=["job-db-sync"])), True,
                 id="templates"),
    pytest.param(lambda: _req(source=Source(chart=CHART, values=VALUES), target_version="2024.2"), False,
                 id="target-version"),
    pytest.param(lambda: _req("upgrade", source=Source(chart=CHART, values=VALUES)), False, id="type"),
])
def test_hash_covers_identity_not_provenance(other: Callable[[], PhaseRequest], same: bool) -> None:
    """Same objects from elsewhere (or with another timeout) are the same phase;
    another target version or type is not."""
    assert (_hash(_req(source=Source(chart=CHART, values=VALUES))) == _hash(other())) is same


def test_hash_changed_by_objects() -> None:
    req = _req(source=Source(chart=CHART, values=VALUES))
    changed = copy.deepcopy(OBJECTS)
    changed[0]["metadata"]["name"] = "keystone-db-sync-2"
    assert _hash(req, OBJECTS) != _hash(req, changed)


def test_values_digest_follows_values_file_content(tmp_path: Path) -> None:
    f = tmp_path / "overrides.yaml"
    f.write_text("pod:\n  replicas:\n    api: 1\n")
    req = _req(source=Source(chart=CHART, values_files=[str(f)]))
    before = build_spec(req, OBJECTS)["source"]["valuesDigest"]
    f.write_text("pod:\n  replicas:\n    api: 2\n")
    assert build_spec(req, OBJECTS)["source"]["valuesDigest"] != before


def test_null_values_and_empty_values_hash_alike() -> None:
    assert _hash(_req(source=Source(chart=CHART, values=None))) == \
        _hash(_req(source=Source(chart=CHART, values={})))


# -- phase_name ------------------------------------------------------------------

def test_name_length_for_a_long_release_and_the_longest_type() -> None:
    release = "keystone-" + "r" * 44
    assert len(release) == 53  # Helm's limit on release names
    req = _req("trafficrollout", release=release)
    h = _hash(req)
    name = phase_name(req, h)
    assert len(name) <= 63
    assert name == f"{release[:38]}-trafficrollout-{h[:8]}"
    assert DNS_LABEL.match(name)


@pytest.mark.parametrize("type_", PHASE_TYPES)
def test_name_fits_a_label_for_every_type(type_: str) -> None:
    name = phase_name(_req(type_, release="a" * 53), "f" * 16)
    assert len(name) <= 63 and DNS_LABEL.match(name)


def test_name_does_not_end_a_truncated_release_with_a_hyphen() -> None:
    release = "k" * 37 + "-" + "x" * 15
    name = phase_name(_req("install", release=release), "0123456789abcdef")
    assert name == "k" * 37 + "-install-01234567"
    assert "--" not in name


def test_name_of_a_short_release() -> None:
    assert phase_name(_req("upgrade"), "0123456789abcdef") == "keystone-upgrade-01234567"


def test_explicit_name_wins() -> None:
    assert phase_name(_req(name="my-phase"), "0123456789abcdef") == "my-phase"


def test_same_request_same_name_different_spec_different_name() -> None:
    a = _req(source=Source(chart=CHART, values={"x": 1}))
    b = _req(source=Source(chart=CHART, values={"x": 1}))
    c = _req(source=Source(chart=CHART, values={"x": 2}), target_version="2026.1")
    assert phase_name(a, _hash(a)) == phase_name(b, _hash(b))
    assert phase_name(a, _hash(a)) != phase_name(c, _hash(c))


def test_phase_body_labels() -> None:
    req = _req("upgrade")
    spec = build_spec(req, OBJECTS)
    h = spec_hash(spec)
    body = phase_body(req, spec, h)
    assert body["apiVersion"] == "lifecycle.openstack.org/v1alpha1" and body["kind"] == "Phase"
    assert body["metadata"]["name"] == phase_name(req, h)
    assert body["metadata"]["namespace"] == "openstack"
    labels = body["metadata"]["labels"]
    assert labels["lifecycle.openstack.org/spec-hash"] == h
    assert labels["lifecycle.openstack.org/service"] == "keystone"
    assert labels["lifecycle.openstack.org/phase-type"] == "upgrade"
    assert body["spec"] is spec


# -- digest ----------------------------------------------------------------------

def test_digest() -> None:
    assert digest({"a": 1, "b": [1, 2]}) == digest({"b": [1, 2], "a": 1})
    assert digest({"a": 1}) != digest({"a": "1"})
    assert digest([1, 2]) != digest([2, 1])
    assert re.fullmatch(r"[0-9a-f]{64}", digest(None))


# -- identity across flows and revisions --------------------------------------

def test_the_release_revision_is_part_of_a_phase_identity() -> None:
    """A test after a rollback (a new revision) is a new run, not the old Phase."""
    assert _hash(_req("test", release_revision=3)) != _hash(_req("test", release_revision=4))


def test_an_upgrade_identity_ignores_the_revision() -> None:
    """The upgrade phase runs before the Helm upgrade: a run interrupted after the
    Helm upgrade must find the same Phase, though the revision moved on."""
    assert _hash(_req("upgrade", release_revision=3)) == _hash(_req("upgrade", release_revision=4))


def test_the_flow_is_part_of_a_phase_identity() -> None:
    a = _req("test", flow_id="update/2026-11-22T03:58:45Z")
    b = _req("test", flow_id="update/2026-11-22T05:00:00Z")
    assert _hash(a) != _hash(b)
    assert _hash(a) == _hash(_req("test", flow_id="update/2026-11-22T03:58:45Z"))


def test_an_upgrade_with_backup_names_its_backup_stably() -> None:
    req = _req("upgrade", target_version="2025.2", release_revision=2, blocks={"upgrade": {"backup_database": True}})
    again = _req("upgrade", target_version="2025.2", release_revision=2, blocks={"upgrade": {"backup_database": True}})
    assert req.backup_ref == again.backup_ref
    assert re.fullmatch(r"keystone-2025-2-[0-9a-f]{8}", req.backup_ref)
    assert _req("upgrade", blocks={"upgrade": {"backup_database": False}}).backup_ref == ""


def test_a_restore_needs_the_backup_to_restore() -> None:
    with pytest.raises(InputError, match="rollback.restore_database needs rollback.backup_ref"):
        _req("rollback", blocks={"rollback": {"restore_database": True}}).validate()
    assert _req("rollback", blocks={"rollback": {"restore_database": True, "backup_ref": "b1"}}).backup_ref == "b1"


def test_the_backup_name_survives_the_helm_upgrade_of_a_resumed_run() -> None:
    """The revision moves when the Helm upgrade ran; the backup (and the Phase) must not."""
    before = _req("upgrade", target_version="2025.2", release_revision=1, flow_id="update/t1",
                  blocks={"upgrade": {"backup_database": True}})
    after = _req("upgrade", target_version="2025.2", release_revision=2, flow_id="update/t1",
                 blocks={"upgrade": {"backup_database": True}})
    later = _req("upgrade", target_version="2025.2", release_revision=2, flow_id="update/t2",
                 blocks={"upgrade": {"backup_database": True}})
    assert before.backup_ref == after.backup_ref != later.backup_ref


# -- failure policy ------------------------------------------------------------------

def test_every_phase_records_its_failure_policy_defaults_included() -> None:
    assert build_spec(_req(), OBJECTS)["failure"] == {"threshold": 3, "unschedulableGraceSeconds": 60}
    req = _req("upgrade", blocks={"failure": {"threshold": 5, "unschedulable_grace": None}})
    req.validate()
    assert build_spec(req, OBJECTS)["failure"] == {"threshold": 5, "unschedulableGraceSeconds": 60}
    assert (req.failure_policy.threshold, req.failure_policy.unschedulable_grace) == (5, 60)


def test_the_failure_policy_is_no_part_of_a_phase_identity() -> None:
    assert _hash(_req()) == _hash(_req(blocks={"failure": {"threshold": 1, "unschedulable_grace": 5}}))


def test_a_negative_failure_option_is_refused() -> None:
    with pytest.raises(InputError) as err:
        _req(blocks={"failure": {"threshold": -1}}).validate()
    assert "failure.threshold must be 0 or more, not -1" in str(err.value)


# -- missing_job ---------------------------------------------------------------------

@pytest.mark.parametrize("type_,block", [("upgrade", "upgrade"), ("rollback", "rollback"),
                                         ("uninstall", "uninstall")])
def test_missing_job_is_recorded_in_the_phase(type_: str, block: str) -> None:
    req = _req(type_, blocks={block: {"missing_job": "warn"}})
    req.validate()
    assert req.options["missing_job"] == "warn"
    assert build_spec(req, OBJECTS)[block]["missingJob"] == "warn"


def test_missing_job_is_no_part_of_a_phase_identity() -> None:
    plain = _req("uninstall", blocks={"uninstall": {"purge_database": True}})
    warned = _req("uninstall", blocks={"uninstall": {"purge_database": True, "missing_job": "warn"}})
    assert _hash(plain) == _hash(warned)
    assert _hash(_req("upgrade")) == _hash(_req("upgrade", blocks={"upgrade": {"missing_job": "fail"}}))
    assert _hash(plain) != _hash(_req("uninstall", blocks={"uninstall": {"purge_database": False}}))


def test_a_missing_job_policy_other_than_fail_or_warn_is_refused() -> None:
    with pytest.raises(InputError) as err:
        _req("rollback", blocks={"rollback": {"missing_job": "ignore"}}).validate()
    assert "rollback.missing_job must be fail or warn, not 'ignore'" in str(err.value)


def test_install_takes_no_missing_job() -> None:
    with pytest.raises(InputError, match="option upgrade does not apply to a install phase"):
        _req("install", blocks={"upgrade": {"missing_job": "warn"}}).validate()


# -- the backup CronJob option ---------------------------------------------------------

@pytest.mark.parametrize("type_, block", [("upgrade", {"backup_database": True}),
                                          ("rollback", {"restore_database": True, "backup_ref": "b1"})])
def test_the_backup_source_is_part_of_the_spec_without_its_unset_keys(type_: str, block: Dict[str, Any]) -> None:
    given = dict(block, backup={"cronjob": "mariadb-backup", "namespace": None, "database": "", "node": None})
    req = _req(type_, blocks={type_: given})
    req.validate()
    spec = build_spec(req, OBJECTS)
    assert spec[type_]["backup"] == {"cronjob": "mariadb-backup"}
    # another CronJob is another phase; a backup block with nothing set is none
    other = _req(type_, blocks={type_: dict(block, backup={"cronjob": "other-backup"})})
    assert _hash(other) != _hash(req)
    unset = _req(type_, blocks={type_: dict(block, backup={"cronjob": None, "database": None})})
    assert "backup" not in build_spec(unset, OBJECTS)[type_]
    assert _hash(unset) == _hash(_req(type_, blocks={type_: dict(block)}))


def test_the_backup_cronjob_must_be_in_the_service_namespace() -> None:
    req = _req("upgrade", blocks={"upgrade": {"backup_database": True,
                                              "backup": {"cronjob": "mariadb-backup", "namespace": "infra"}}})
    with pytest.raises(InputError) as err:
        req.validate()
    assert "upgrade.backup.namespace is infra, not openstack" in str(err.value)
    assert "must be in the service's namespace" in str(err.value)
    _req("upgrade", blocks={"upgrade": {"backup_database": True, "backup": {
        "cronjob": "mariadb-backup", "namespace": "openstack"}}}).validate()


def test_options_set_replace_the_type_s_block_and_the_spec_says_it() -> None:
    """A database step the render has nothing for is turned off in the options
    (steps.without_database), and the Phase's spec records it off."""
    req = _req("upgrade", blocks={"upgrade": {"backup_database": True, "backup": {"cronjob": "mariadb-backup"}}})
    req.options = dict(req.options, backup_database=False)
    assert req.options == {"backup_database": False, "backup": {"cronjob": "mariadb-backup"}}
    assert build_spec(req, OBJECTS)["upgrade"]["backupDatabase"] is False
    install = _req("install")
    install.options = {"backup_database": True}
    assert install.options == {} and install.blocks == {}


def test_backup_databases_must_be_a_list_of_names() -> None:
    for names in ("nova", [""], [1]):
        with pytest.raises(InputError, match="upgrade.backup.databases must be a list of database names"):
            _req("upgrade", blocks={"upgrade": {"backup": {"databases": names}}}).validate()
    _req("upgrade", blocks={"upgrade": {"backup": {"databases": ["nova", "nova_cell0"]}}}).validate()
