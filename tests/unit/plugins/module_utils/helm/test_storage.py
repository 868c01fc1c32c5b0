"""plugins/module_utils/helm/storage.py: Helm's storage record, read, and a
pending revision whose Helm process lost the apiserver recorded as failed."""

from __future__ import annotations

import base64
import gzip
import json
from typing import Any, Dict, Optional

import pytest

from support.fake_api import OneKind

from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import DynamicApiError
from ansible_collections.lcm.openstack.plugins.module_utils.helm import storage


def _record(status: str) -> Dict[str, Any]:
    return {"name": "keystone", "version": 2, "config": {"conf": {"password": "s3cret"}},
            "info": {"status": status, "description": "Preparing upgrade"}}


class _Secrets:
    def __init__(self, stored: Optional[Dict[str, Any]]) -> None:
        self.stored, self.patches = stored, []  # type: ignore[var-annotated]

    def get(self, name: str, namespace: str) -> Any:
        if self.stored is None:
            raise _not_found()
        stored = self.stored

        class _R:
            def to_dict(self) -> Dict[str, Any]:
                return stored
        return _R()

    def patch(self, body: Dict[str, Any], namespace: str, content_type: str) -> None:
        self.patches.append((body, namespace, content_type))


def _Dyn(secrets: _Secrets) -> OneKind:  # pylint: disable=invalid-name
    return OneKind(secrets, "v1", "Secret")


def _not_found() -> Exception:
    from kubernetes.client.exceptions import ApiException
    exc = ApiException(status=404, reason="Not Found")
    exc.body = b'{"kind":"Status","code":404,"reason":"NotFound"}'
    return DynamicApiError(exc)


def _secret(record: Dict[str, Any]) -> Dict[str, Any]:
    return {"metadata": {"name": "sh.helm.release.v1.keystone.v2", "resourceVersion": "812",
                         "labels": {"owner": "helm", "name": "keystone", "status": record["info"]["status"]}},
            "data": {"release": storage.encode(record)}}


def test_encode_is_the_inverse_of_decode() -> None:
    record = _record("deployed")
    assert storage.decode(storage.encode(record)) == record


@pytest.mark.parametrize("status", storage.PENDING)
def test_a_pending_revision_is_recorded_failed_on_the_version_read(status: str) -> None:
    secrets = _Secrets(_secret(_record(status)))
    assert storage.mark_failed(_Dyn(secrets), "openstack", "keystone", 2, "connection lost")
    [(body, namespace, content_type)] = secrets.patches
    assert (namespace, content_type) == ("openstack", "application/merge-patch+json")
    assert body["metadata"] == {"name": "sh.helm.release.v1.keystone.v2", "resourceVersion": "812",
                                "labels": {"status": "failed"}}
    written = storage.decode(body["data"]["release"])
    assert written["info"] == {"status": "failed", "description": "connection lost"}
    assert written["config"] == _record(status)["config"]  # the rest of the record untouched


@pytest.mark.parametrize("stored", [_secret(_record("deployed")), _secret(_record("failed")), None])
def test_anything_but_a_pending_revision_is_left_alone(stored: Optional[Dict[str, Any]]) -> None:
    secrets = _Secrets(stored)
    assert not storage.mark_failed(_Dyn(secrets), "openstack", "keystone", 2, "connection lost")
    assert secrets.patches == []


# -- the deployed revision, read from Helm's storage ------------------------------

def _storage(record: dict, compress: bool = True) -> str:
    raw = json.dumps(record).encode()
    inner = base64.b64encode(gzip.compress(raw) if compress else raw)
    return base64.b64encode(inner).decode()


@pytest.mark.parametrize("compress", [True, False])
def test_a_helm_storage_record_decodes(compress: bool) -> None:
    record = {"name": "keystone", "version": 3, "config": {"lifecycle": {"version": "2025.2"}},
              "chart": {"metadata": {"version": "0.1.0", "appVersion": "2025.1"}}}
    assert storage.decode(_storage(record, compress)) == record


class _Listed:
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


class _ListDyn:
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
    secrets = _Listed([secret(2, {"a": 1}), secret(10, {"a": 2})])
    deployed = storage.deployed(_ListDyn(secrets), "openstack", "keystone")
    assert (deployed.revision, deployed.values) == (10, {"a": 2})
    assert secrets.selector == "owner=helm,name=keystone,status=deployed"
    assert storage.deployed(_ListDyn(_Listed([])), "openstack", "keystone") is None
