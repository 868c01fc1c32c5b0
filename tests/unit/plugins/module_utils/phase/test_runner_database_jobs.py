"""Database jobs run only when their phase option asks; the deployed release is
read from Helm's own storage record."""

from __future__ import annotations

import base64
import gzip
import json

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.helm import storage as release_storage, render
from ansible_collections.lcm.openstack.plugins.module_utils.phase import runner as phase
from support.paths import UNIT_FIXTURES

RENDERED = UNIT_FIXTURES / "phase" / "rendered_keystone.out"


def _sources(objects) -> set:
    return {o.source for o in objects}


@pytest.mark.parametrize("phase_type, option, template", [
    ("upgrade", "backup_database", "templates/job-db-backup.yaml"),
    ("rollback", "restore_database", "templates/job-db-restore.yaml"),
    ("uninstall", "purge_database", "templates/job-db-drop.yaml"),
])
def test_a_database_job_is_left_out_unless_asked_for(phase_type: str, option: str, template: str) -> None:
    rendered = render.parse_manifest(RENDERED.read_text())
    assert template in _sources(rendered), "the fixture must render the job"
    assert template not in _sources(phase._without_unasked_database_jobs(rendered, phase_type, {}))
    assert template not in _sources(phase._without_unasked_database_jobs(rendered, phase_type, {option: False}))
    assert template in _sources(phase._without_unasked_database_jobs(rendered, phase_type, {option: True}))


def test_other_phases_keep_every_object() -> None:
    rendered = render.parse_manifest(RENDERED.read_text())
    assert phase._without_unasked_database_jobs(rendered, "install", {}) == rendered


def _storage(record: dict, compress: bool = True) -> str:
    raw = json.dumps(record).encode()
    inner = base64.b64encode(gzip.compress(raw) if compress else raw)
    return base64.b64encode(inner).decode()


@pytest.mark.parametrize("compress", [True, False])
def test_a_helm_storage_record_decodes(compress: bool) -> None:
    record = {"name": "keystone", "version": 3, "config": {"lifecycle": {"version": "2025.2"}},
              "chart": {"metadata": {"version": "0.1.0", "appVersion": "2025.1"}}}
    assert release_storage.decode(_storage(record, compress)) == record


class _Secrets:
    def __init__(self, items):
        self.items = items
        self.selector = None

    def get(self, namespace, label_selector):
        self.selector = label_selector
        items = self.items

        class _R:
            def to_dict(self):
                return {"items": items}
        return _R()


class _Dyn:
    def __init__(self, secrets):
        self.resources = self
        self.secrets = secrets

    def get(self, api_version, kind):
        assert (api_version, kind) == ("v1", "Secret")
        return self.secrets


def test_the_deployed_revision_is_the_newest_deployed_record() -> None:
    def secret(version: int, values: dict) -> dict:
        record = {"version": version, "config": values, "chart": {"metadata": {"version": "0.1.0"}}}
        return {"metadata": {"labels": {"version": str(version)}}, "data": {"release": _storage(record)}}
    secrets = _Secrets([secret(2, {"a": 1}), secret(10, {"a": 2})])
    deployed = release_storage.deployed(_Dyn(secrets), "openstack", "keystone")
    assert (deployed.revision, deployed.values) == (10, {"a": 2})
    assert secrets.selector == "owner=helm,name=keystone,status=deployed"
    assert release_storage.deployed(_Dyn(_Secrets([])), "openstack", "keystone") is None
