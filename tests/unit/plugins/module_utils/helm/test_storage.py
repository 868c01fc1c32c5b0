"""plugins/module_utils/helm/storage.py: Helm's storage record, read, and a
pending revision whose Helm process lost the apiserver recorded as failed."""

from __future__ import annotations

import base64
import gzip
import json
from typing import Any, Dict, Optional

import pytest
import yaml

from support.fake_api import OneKind
from support.paths import UNIT_FIXTURES

from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import DynamicApiError
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError, PhaseError
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


# -- where Helm keeps the records: HELM_DRIVER ------------------------------------
CAPTURED = [dict(i, data={"release": "".join(i["data"]["release"].split())})  # unwrapped
            for i in yaml.safe_load((UNIT_FIXTURES / "release_storage" / "captured.yaml").read_text())]


@pytest.mark.parametrize("driver, kind", [
    (None, "Secret"), ("", "Secret"), ("secret", "Secret"), ("secrets", "Secret"),
    ("configmap", "ConfigMap"), ("configmaps", "ConfigMap"), ("sql", None)])
def test_the_driver_names_helm_accepts_say_where_the_records_are(driver: Optional[str], kind: Optional[str]) -> None:
    assert storage.kind({} if driver is None else {"HELM_DRIVER": driver}) == kind


@pytest.mark.parametrize("driver, says", [
    ("memory", "^HELM_DRIVER=memory keeps a release only as long as one Helm process runs"),
    ("Secret", "^HELM_DRIVER='Secret' is not a storage driver Helm knows"),  # Helm's names are lower case
    ("etcd", "^HELM_DRIVER='etcd' is not a storage driver Helm knows; unset it, or set it to secret, configmap or sql")])
def test_a_driver_that_keeps_nothing_or_that_helm_does_not_know_is_refused(driver: str, says: str) -> None:
    with pytest.raises(InputError, match=says):
        storage.kind({"HELM_DRIVER": driver})


@pytest.mark.parametrize("item", CAPTURED, ids=lambda i: f"{i['kind']}-{i['metadata']['name']}")
def test_the_records_helm_3_and_4_wrote_decode_from_either_kind(item: Dict[str, Any]) -> None:
    record = storage.decode(item["data"]["release"], item["kind"])
    labels = item["metadata"]["labels"]
    assert (record["name"], str(record["version"]), record["info"]["status"]) == (
        labels["name"], labels["version"], labels["status"])
    assert record["chart"]["metadata"]["version"] == "0.1.0"
    assert record["config"]["greeting"] in ("hi", "hello")
    # and encode writes what Helm wrote, in the same kind
    assert storage.decode(storage.encode(record, item["kind"]), item["kind"]) == record


def test_a_configmap_record_is_not_read_as_a_secret() -> None:
    [configmap] = [i for i in CAPTURED if i["metadata"]["name"] == "sh.helm.release.v1.tiny4.v1"]
    with pytest.raises(ValueError):
        storage.decode(configmap["data"]["release"], "Secret")


def test_the_deployed_revision_is_read_from_configmaps_under_the_configmap_driver() -> None:
    items = [i for i in CAPTURED if i["kind"] == "ConfigMap" and i["metadata"]["labels"]["name"] == "tiny3"]
    listed = _Listed([i for i in items if i["metadata"]["labels"]["status"] == "deployed"])
    deployed = storage.deployed(OneKind(listed, "v1", "ConfigMap"), "openstack", "tiny3", "ConfigMap")
    assert (deployed.revision, deployed.values, deployed.chart_version) == (2, {"greeting": "hello"}, "0.1.0")
    assert listed.selector == "owner=helm,name=tiny3,status=deployed"


def test_a_pending_configmap_record_is_recorded_failed_as_helm_encodes_configmaps() -> None:
    record = _record("pending-upgrade")
    configmaps = _Secrets({"metadata": {"name": "sh.helm.release.v1.keystone.v2", "resourceVersion": "9"},
                           "data": {"release": storage.encode(record, "ConfigMap")}})
    assert storage.mark_failed(OneKind(configmaps, "v1", "ConfigMap"), "openstack", "keystone", 2, "lost",
                               "ConfigMap")
    [(body, namespace, content_type)] = configmaps.patches
    assert body["metadata"]["labels"] == {"status": "failed"}
    written = body["data"]["release"]
    assert storage.decode(written, "ConfigMap")["info"] == {"status": "failed", "description": "lost"}
    with pytest.raises(ValueError):  # one base64 only, as Helm writes ConfigMaps: not a Secret's
        storage.decode(written, "Secret")


def test_a_record_only_helm_reaches_is_never_rewritten() -> None:
    class _NoClient:
        @property
        def resources(self) -> Any:
            raise AssertionError("the SQL driver's records are not in the cluster")
    assert not storage.mark_failed(_NoClient(), "openstack", "keystone", 2, "lost", None)


class _Helm:
    def __init__(self, history: list) -> None:
        self.entries, self.asked = history, []  # type: ignore[var-annotated]

    def history(self, release: str, namespace: str) -> list:
        self.asked.append(("history", release, namespace))
        return self.entries

    def get_values(self, release: str, namespace: str, revision: int) -> dict:
        self.asked.append(("values", release, namespace, revision))
        return {"from": f"revision {revision}"}


def test_the_deployed_revision_under_the_sql_driver_is_asked_of_helm() -> None:
    helm = _Helm([{"revision": 3, "status": "superseded"}, {"revision": 4, "status": "deployed"},
                  {"revision": 5, "status": "failed"}])
    deployed = storage.deployed_by_helm(helm, "openstack", "keystone")
    assert (deployed.revision, deployed.values) == (4, {"from": "revision 4"})
    assert helm.asked == [("history", "keystone", "openstack"), ("values", "keystone", "openstack", 4)]
    assert storage.deployed_by_helm(_Helm([{"revision": 1, "status": "failed"}]), "openstack", "keystone") is None


def test_the_manifest_and_the_charts_values_are_read_only_when_asked() -> None:
    record = {"version": 3, "config": {"endpoints": {"identity": {"port": 1}}}, "manifest": "---\nkind: Service\n",
              "chart": {"metadata": {"version": "0.1.0"}, "values": {"endpoints": {"identity": {"name": "keystone"}}}}}
    secrets = _Listed([{"metadata": {"labels": {"version": "3"}}, "data": {"release": _storage(record)}}])
    plain = storage.deployed(_ListDyn(secrets), "openstack", "keystone")
    assert (plain.manifest, plain.defaults) == ("", {})
    full = storage.deployed(_ListDyn(secrets), "openstack", "keystone", with_manifest=True)
    assert full.manifest == "---\nkind: Service\n"
    assert (full.defaults, full.values) == (record["chart"]["values"], record["config"])


class _Result:
    def __init__(self, stdout: str, rc: int = 0) -> None:
        self.stdout, self.rc, self.stderr = stdout, rc, "" if rc == 0 else "Error: boom"


class _HelmTogether(_Helm):
    def __init__(self, history: list, failing: str = "") -> None:
        super().__init__(history)
        self.failing = failing

    def run_together(self, calls: list) -> list:
        self.asked.append(("together", [" ".join(c) for c in calls]))
        out = {"values": _Result('{"a": 1}'), "all": _Result('{"a": 1, "endpoints": {}}'), "manifest": _Result("---\n")}
        keys = ["all" if "--all" in c else c[1] for c in calls]
        return [_Result("", 1) if k == self.failing else out[k] for k in keys]

    def error(self, result: Any) -> PhaseError:
        return PhaseError(f"helm failed: {result.stderr}")


def test_under_the_sql_driver_the_manifest_and_every_value_are_read_at_once() -> None:
    helm = _HelmTogether([{"revision": 4, "status": "deployed"}])
    deployed = storage.deployed_by_helm(helm, "openstack", "keystone", with_manifest=True)
    assert (deployed.revision, deployed.values, deployed.manifest) == (4, {"a": 1}, "---\n")
    assert deployed.defaults == {"a": 1, "endpoints": {}}
    assert len(helm.asked) == 2
    (what, calls) = helm.asked[1]
    assert what == "together" and calls == [
        "get values keystone --namespace openstack --revision 4 --output json",
        "get values keystone --namespace openstack --revision 4 --output json --all",
        "get manifest keystone --namespace openstack --revision 4"]
    with pytest.raises(PhaseError, match="helm failed: Error: boom"):
        storage.deployed_by_helm(_HelmTogether([{"revision": 4, "status": "deployed"}], failing="manifest"),
                                 "openstack", "keystone", with_manifest=True)
