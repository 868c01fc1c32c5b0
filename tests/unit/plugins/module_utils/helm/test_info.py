"""plugins/module_utils/helm/info.py: one release or every release of a
namespace, each with status, history, values and manifest, credentials and
Secret data masked; an uninstalled release kept in history has no manifest."""

from __future__ import annotations

import base64
from typing import Any, Dict, List, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import MASK, Redactor
from ansible_collections.lcm.openstack.plugins.module_utils.helm.info import release_info

SECRET = "a-long-db-passw0rd"
MANIFEST = f"""---
# Source: keystone/templates/secret-db.yaml
apiVersion: v1
kind: Secret
metadata:
  name: keystone-db-user
data:
  DB_CONNECTION: {base64.b64encode(f"mysql+pymysql://keystone:{SECRET}@mariadb/keystone".encode()).decode()}
---
# Source: keystone/templates/configmap-bin.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: keystone-bin
data:
  db-sync.sh: keystone-manage db_sync
"""


def _entry(revision: int, status: str) -> Dict[str, Any]:
    return {"revision": revision, "status": status, "chart": "keystone-2025.1.0", "app_version": "2025.1",
            "description": "Upgrade complete", "updated": "2026-11-24T03:00:00Z"}


class _Helm:
    def __init__(self, major: int, histories: Dict[str, List[Dict[str, Any]]]) -> None:
        self.major, self.histories, self.redactor = major, histories, Redactor()
        self.listed: List[List[str]] = []
        self.manifests_read: List[str] = []

    def check_version(self) -> None:
        pass

    def run(self, args: List[str]) -> Any:
        self.listed.append(list(args))
        names = ",".join(f'{{"name": "{n}"}}' for n in self.histories)

        class _R:
            stdout = f"[{names}]"
        return _R()

    def history(self, release: str, namespace: str) -> List[Dict[str, Any]]:
        return self.histories.get(release, [])

    def get_values(self, release: str, namespace: str, all_values: bool = False) -> Dict[str, Any]:
        return {"endpoints": {"oslo_db": {"auth": {"keystone": {"password": SECRET}}}}, "all": all_values}

    def get_manifest(self, release: str, namespace: str) -> str:
        self.manifests_read.append(release)
        return MANIFEST


def _one(out: List[Dict[str, Any]], name: str) -> Optional[Dict[str, Any]]:
    return next((r for r in out if r["status"]["name"] == name), None)


def test_one_release_with_its_credentials_and_secret_data_masked() -> None:
    helm = _Helm(3, {"keystone": [_entry(1, "superseded"), _entry(2, "deployed")]})
    (release,) = release_info(helm, "openstack", "keystone", all_values=True)
    assert release["status"]["revision"] == 2 and release["status"]["status"] == "deployed"
    assert [h["revision"] for h in release["history"]] == [1, 2] and helm.listed == []
    assert release["release_values"]["endpoints"]["oslo_db"]["auth"]["keystone"]["password"] == MASK
    assert release["release_values"]["all"] is True
    assert SECRET not in release["manifest"] and "keystone-manage db_sync" in release["manifest"]


def test_every_release_of_the_namespace_those_without_history_left_out() -> None:
    helm = _Helm(3, {"keystone": [_entry(1, "deployed")], "glance": [], "placement": [_entry(3, "uninstalled")]})
    out = release_info(helm, "openstack")
    assert helm.listed == [["list", "--namespace", "openstack", "--output", "json", "--max", "0", "--all"]]
    assert sorted(r["status"]["name"] for r in out) == ["keystone", "placement"]
    assert _one(out, "placement")["manifest"] == "" and helm.manifests_read == ["keystone"]


def test_helm_4_lists_every_release_without_all() -> None:
    helm = _Helm(4, {"keystone": [_entry(1, "deployed")]})
    release_info(helm, "openstack")
    assert "--all" not in helm.listed[0]
