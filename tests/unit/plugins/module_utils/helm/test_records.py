"""plugins/module_utils/helm/records.py: a release's revisions read from its
storage Secrets (encoded as Helm writes them) as `helm history`, `helm get
manifest` and `helm get values` print them; the Helm CLI where storage is not
what Helm reads, or may not be listed. (present() on it: test_release.py.)"""

from __future__ import annotations

import base64
import gzip
import json
from typing import Any, Dict, List, Optional, Sequence

import pytest
from kubernetes.dynamic.exceptions import DynamicApiError, ForbiddenError, UnauthorizedError
from support.fake_api import OneKind
from support.fake_leases import error

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import MASK
from ansible_collections.lcm.openstack.plugins.module_utils.helm import records
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm, Result

SECRET = "an-old-admin-passw0rd"


def _record(revision: int, status: str = "superseded", manifest: str = "kind: ConfigMap",
            config: Optional[Dict[str, Any]] = None, chart: Any = "keystone-0.1.0") -> Dict[str, Any]:
    """A release as Helm stores it (the fields these reads use, and some they do not)."""
    name, version = chart.rsplit("-", 1) if chart else ("", "")
    return {"name": "keystone", "namespace": "openstack", "version": revision, "manifest": manifest,
            "config": config, "hooks": [{"name": "keystone-db-sync", "manifest": "kind: Job"}],
            "chart": {"metadata": {"name": name, "version": version, "appVersion": "2025.1"},
                      "templates": [{"name": "templates/x.yaml", "data": "e30="}]} if chart else None,
            "info": {"status": status, "description": f"revision {revision}",
                     "first_deployed": "2026-11-20T10:00:00Z", "last_deployed": f"2026-11-2{revision % 10}T10:00:00.5+02:00"}}


def _secret(record: Dict[str, Any], compress: bool = True) -> Dict[str, Any]:
    """The storage Secret Helm writes: JSON, gzipped, base64 by Helm, base64 again as Secret data."""
    raw = json.dumps(record).encode()
    helm_b64 = base64.b64encode(gzip.compress(raw) if compress else raw)
    return {"metadata": {"name": f"sh.helm.release.v1.keystone.v{record['version']}",
                         "labels": {"owner": "helm", "name": "keystone", "status": record["info"]["status"],
                                    "version": str(record["version"])}},
            "data": {"release": base64.b64encode(helm_b64).decode()}}


class _Secrets:
    def __init__(self, items: List[Dict[str, Any]], refuse: Optional[DynamicApiError] = None) -> None:
        self.items, self.refuse = items, refuse
        self.asked: List[Dict[str, Any]] = []

    def get(self, **kwargs: Any) -> Any:
        self.asked.append(kwargs)
        if self.refuse is not None:
            raise self.refuse
        items = self.items

        class _R:
            def to_dict(self) -> Dict[str, Any]:
                return {"kind": "SecretList", "items": items}
        return _R()


def _Dyn(secrets: _Secrets) -> OneKind:  # pylint: disable=invalid-name
    return OneKind(secrets, "v1", "Secret")


class _Cli(Helm):
    """A Helm whose reads answer canned output, each call logged."""

    def __init__(self, env: Optional[Dict[str, str]] = None) -> None:
        super().__init__("helm", env=env or {}, _version="v3.19.0")
        self.ran: List[List[str]] = []

    def _run_once(self, args: Sequence[str], timeout: Any) -> Result:
        self.ran.append(list(args))
        out = {"history": '[{"revision": 1, "status": "deployed", "chart": "keystone-0.1.0"}]',
               "get": "kind: Secret\n" if args[1] == "manifest" else '{"from": "helm"}'}[args[0]]
        return Result(["helm", *args], 0, out, "")


# -- read ---------------------------------------------------------------------------
def test_the_history_is_every_revision_oldest_first_as_helm_history_prints_it() -> None:
    items = [_secret(_record(10, "deployed", "kind: Deployment", {"pod": {"replicas": 3}}, "keystone-0.2.0")),
             _secret(_record(2)), _secret(_record(9, "failed", chart=None), compress=False)]
    secrets = _Secrets(items)
    stored = records.read(_Dyn(secrets), "openstack", "keystone")
    assert secrets.asked == [{"namespace": "openstack", "label_selector": "owner=helm,name=keystone",
                              "serializer": records.plain}]
    assert stored is not None and stored.history == [
        {"revision": 2, "updated": "2026-11-22T10:00:00.5+02:00", "status": "superseded", "chart": "keystone-0.1.0",
         "app_version": "2025.1", "description": "revision 2"},
        # Helm's words for a record without its chart
        {"revision": 9, "updated": "2026-11-29T10:00:00.5+02:00", "status": "failed", "chart": "MISSING",
         "app_version": "MISSING", "description": "revision 9"},
        {"revision": 10, "updated": "2026-11-20T10:00:00.5+02:00", "status": "deployed", "chart": "keystone-0.2.0",
         "app_version": "2025.1", "description": "revision 10"}]
    # the newest revision's, as `helm get manifest` (a line after it) and `helm get values -o json` print them
    assert (stored.manifest, stored.values) == ("kind: Deployment\n", {"pod": {"replicas": 3}})


def test_a_release_without_revisions_has_an_empty_history_and_no_values() -> None:
    stored = records.read(_Dyn(_Secrets([])), "openstack", "keystone")
    assert stored is not None and (stored.history, stored.manifest, stored.values) == ([], "", {})
    stored = records.read(_Dyn(_Secrets([_secret(_record(1, "deployed", config=None))])), "openstack", "keystone")
    assert stored is not None and stored.values == {}  # `helm get values` prints null: no values


def test_the_history_keeps_the_newest_256_revisions_as_helm_history_max_256_does() -> None:
    stored = records.read(_Dyn(_Secrets([_secret(_record(r)) for r in range(300, 0, -1)])), "openstack", "keystone")
    assert stored is not None and [h["revision"] for h in stored.history] == list(range(45, 301))


def test_a_secret_that_does_not_decode_is_left_out_as_helm_leaves_it_out() -> None:
    bad = [{"metadata": {"name": "sh.helm.release.v1.keystone.v3"}, "data": {"release": "bm90LWJhc2U2NA=="}},
           {"metadata": {"name": "sh.helm.release.v1.keystone.v4"}, "data": {}},
           {"metadata": {"name": "sh.helm.release.v1.keystone.v5"},
            "data": {"release": base64.b64encode(base64.b64encode(b"\x1f\x8b\x08 truncated")).decode()}}]
    stored = records.read(_Dyn(_Secrets([_secret(_record(2, "deployed"))] + bad)), "openstack", "keystone")
    assert stored is not None and [h["revision"] for h in stored.history] == [2]


@pytest.mark.parametrize("refusal", [error(ForbiddenError, 403), error(UnauthorizedError, 401)])
def test_a_client_that_may_not_list_secrets_reads_nothing(refusal: DynamicApiError) -> None:
    assert records.read(_Dyn(_Secrets([], refuse=refusal)), "openstack", "keystone") is None


def test_another_failure_to_list_says_what_was_listed_and_no_secret_data() -> None:
    with pytest.raises(PhaseError, match="^could not list secrets in namespace openstack: HTTP 500") as err:
        records.read(_Dyn(_Secrets([_secret(_record(1))], refuse=error(DynamicApiError, 500))), "openstack",
                     "keystone")
    assert "release" not in json.dumps(err.value.details)


# -- where the record comes from --------------------------------------------------------
class _Kinds:
    """A dynamic client serving Secrets and ConfigMaps, each list logged."""

    def __init__(self, **by_kind: _Secrets) -> None:
        self.resources, self.by_kind = self, by_kind

    def get(self, api_version: str, kind: str) -> Any:
        assert api_version == "v1"
        return self.by_kind[kind]


def _configmap(record: Dict[str, Any]) -> Dict[str, Any]:
    """The storage ConfigMap Helm writes under HELM_DRIVER=configmap: the record as Helm encodes it, no second base64."""
    secret = _secret(record)
    return {"metadata": secret["metadata"], "data": {"release": base64.b64decode(secret["data"]["release"]).decode()}}


@pytest.mark.parametrize("driver, listed", [
    (None, "Secret"), ("", "Secret"), ("secret", "Secret"), ("secrets", "Secret"),
    ("configmap", "ConfigMap"), ("configmaps", "ConfigMap"), ("sql", None)])
def test_storage_is_read_where_helms_driver_keeps_it(monkeypatch: pytest.MonkeyPatch, driver: Optional[str],
                                                     listed: Optional[str]) -> None:
    monkeypatch.delenv("HELM_DRIVER", raising=False)
    cli = _Cli(env={} if driver is None else {"HELM_DRIVER": driver})
    record = _record(1, "deployed", "kind: ConfigMap", {"from": "storage"})
    kinds = {"Secret": _Secrets([_secret(record)]), "ConfigMap": _Secrets([_configmap(record)])}
    revisions = records.Revisions(cli, _Kinds(**kinds), "keystone", "openstack")
    history = revisions.history()
    assert (revisions.manifest(), revisions.values()) == (
        ("kind: ConfigMap\n", {"from": "storage"}) if listed else ("kind: Secret\n", {"from": "helm"}))
    assert [h["revision"] for h in history] == [1]
    cli_reads = [["history", "keystone"], ["get", "manifest"], ["get", "values"]]
    assert [a[:2] for a in cli.ran] == ([] if listed else cli_reads)  # one list, no Helm process
    assert {k: len(v.asked) for k, v in kinds.items()} == {k: int(k == listed) for k in kinds}


@pytest.mark.parametrize("driver", ["memory", "Secret", "etcd"])
def test_a_driver_helm_keeps_nothing_in_or_does_not_know_is_refused_before_anything_runs(
        monkeypatch: pytest.MonkeyPatch, driver: str) -> None:
    monkeypatch.delenv("HELM_DRIVER", raising=False)
    cli = _Cli(env={"HELM_DRIVER": driver})
    secrets = _Secrets([])
    with pytest.raises(PhaseError, match=f"^HELM_DRIVER={driver if driver == 'memory' else repr(driver)} "):
        records.Revisions(cli, _Dyn(secrets), "keystone", "openstack").history()
    assert cli.ran == [] and secrets.asked == []


def test_the_driver_of_the_environment_helm_runs_in_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELM_DRIVER", "configmap")
    assert records.kind_of(_Cli()) == "ConfigMap"
    assert records.kind_of(_Cli(env={"HELM_DRIVER": "secret"})) == "Secret"  # Helm's own environment wins


@pytest.mark.parametrize("dyn, name", [(None, "keystone"), ("dyn", "Keystone"), ("dyn", "k" * 54)])
def test_without_a_client_or_for_a_name_helm_refuses_the_cli_answers(dyn: Any, name: str) -> None:
    cli = _Cli()
    secrets = _Secrets([])
    records.Revisions(cli, _Dyn(secrets) if dyn else None, name, "openstack").history()
    assert [a[0] for a in cli.ran] == ["history"] and secrets.asked == []


def test_a_refused_list_falls_back_to_the_cli() -> None:
    cli = _Cli()
    revisions = records.Revisions(cli, _Dyn(_Secrets([], refuse=error(ForbiddenError, 403))), "keystone", "openstack")
    assert revisions.history()[-1]["chart"] == "keystone-0.1.0" and revisions.values() == {"from": "helm"}
    assert [a[:2] for a in cli.ran] == [["history", "keystone"], ["get", "values"]]


def test_the_deployed_credentials_are_masked_wherever_they_would_show() -> None:
    cli = _Cli()
    secrets = _Secrets([_secret(_record(1, "deployed", config={"endpoints": {"admin": {"password": SECRET}}}))])
    revisions = records.Revisions(cli, _Dyn(secrets), "keystone", "openstack")
    revisions.history()
    assert revisions.values()["endpoints"]["admin"]["password"] == SECRET  # compared as it is
    assert cli.redactor.redact(f"cannot log in as admin:{SECRET}") == f"cannot log in as admin:{MASK}"
