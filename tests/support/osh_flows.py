"""One namespace with openstack-helm's infrastructure (mariadb with its backup
CronJob, memcached, rabbitmq) and the flow playbooks run in it, as the
account docs/rbac.md sets up: shared by the integration tests of the flows
on the stock charts (test_openstack_helm_flows.py, test_rolling_update.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

from kubernetes import dynamic

from support import kube, openstack_helm, runner_account
from support.ansible import ROOT

GROUP = "lifecycle.openstack.org/v1alpha1"
BIN = Path(sys.executable).parent
IMAGE = "quay.io/airshipit/keystone:{}-ubuntu_noble"
# The jobs the stock keystone chart renders for an install, each of which the
# install phase must run (none left to Helm hooks).
KEYSTONE_INSTALL_JOBS = {
    "keystone-db-init", "keystone-db-sync", "keystone-rabbit-init", "keystone-credential-setup",
    "keystone-fernet-setup", "keystone-domain-manage", "keystone-bootstrap",
}


def keystone_values(version: str, **extra: Any) -> Dict[str, Any]:
    """keystone at one version: the API and db-sync images of that tag."""
    tag = IMAGE.format(version)
    values: Dict[str, Any] = {"images": {"tags": {"keystone_api": tag, "keystone_db_sync": tag}}}
    values.update(extra)
    return values


class Site:
    """One namespace with the infrastructure, and the flows run in it."""

    def __init__(self, kubeconfig: str, dyn: dynamic.DynamicClient, namespace: str) -> None:
        self.kubeconfig, self.dyn, self.namespace = kubeconfig, dyn, namespace
        runner_account.grant_documented(kubeconfig, namespace)
        self.credential = runner_account.credential_env(dyn, kubeconfig, namespace)

    def flow(self, playbook: str, service: str, **extra: Any) -> subprocess.CompletedProcess:
        env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", HELM_BIN=openstack_helm.helm_bin(),
                   ANSIBLE_COLLECTIONS_PATH=str(ROOT / "build" / "collections"))
        env.update(self.credential)
        env.pop("KUBECONFIG")  # the runner has its token, not the administrator's kubeconfig
        chart = str(openstack_helm.chart(service))
        variables = {"service": service, "openstack_namespace": self.namespace, "chart": chart, "phase_timeout": 600}
        variables.update(extra)
        cmd = [str(BIN / "ansible-playbook"), "-i", str(ROOT / "examples" / "inventory.yml"),
               str(ROOT / "playbooks" / playbook), "-e", json.dumps(variables)]
        return subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)

    def items(self, api_version: str, kind: str, selector: str = "") -> List[Dict[str, Any]]:
        res = self.dyn.resources.get(api_version=api_version, kind=kind)
        return res.get(namespace=self.namespace, label_selector=selector or None).to_dict()["items"]

    def get(self, api_version: str, kind: str, name: str) -> Optional[Dict[str, Any]]:
        return kube.get_or_none(self.dyn, api_version, kind, name, self.namespace)

    def lifecycle(self, service: str) -> Dict[str, Any]:
        return (self.get(GROUP, "ServiceLifecycle", service) or {}).get("status") or {}

    def phases(self, service: str, type_: str = "") -> List[Dict[str, Any]]:
        selector = f"lifecycle.openstack.org/service={service}"
        if type_:
            selector += f",lifecycle.openstack.org/phase-type={type_}"
        found = self.items(GROUP, "Phase", selector)
        return sorted(found, key=lambda p: p["metadata"]["creationTimestamp"])

    def release(self, name: str) -> Dict[str, Any]:
        out = subprocess.run([openstack_helm.helm_bin(), "status", name, "-n", self.namespace, "-o", "json"],
                             env=dict(os.environ, KUBECONFIG=self.kubeconfig), capture_output=True, text=True,
                             check=False)
        return json.loads(out.stdout) if out.returncode == 0 else {}

    def api_image(self) -> str:
        deployment = self.get("apps/v1", "Deployment", "keystone-api") or {}
        return deployment["spec"]["template"]["spec"]["containers"][0]["image"]

    def ready_endpoints(self, service: str) -> int:
        slices = self.items("discovery.k8s.io/v1", "EndpointSlice", f"kubernetes.io/service-name={service}")
        return sum(1 for s in slices for e in s.get("endpoints") or []
                   if (e.get("conditions") or {}).get("ready"))


def ok(run: subprocess.CompletedProcess) -> None:
    assert run.returncode == 0, (run.stdout + run.stderr)[-6000:]


def failed(run: subprocess.CompletedProcess) -> str:
    assert run.returncode != 0, run.stdout[-4000:]
    return run.stdout + run.stderr


def deployed(kubeconfig: str, dyn: dynamic.DynamicClient, prefix: str) -> Iterator[Site]:
    """A namespace with the infrastructure installed; deleted afterwards (a fixture's body)."""
    name = f"{prefix}-{uuid.uuid4().hex[:6]}"
    openstack_helm.install(kubeconfig, "mariadb", name, openstack_helm.MARIADB_BACKUP)
    openstack_helm.install_infrastructure(kubeconfig, name)
    yield Site(kubeconfig, dyn, name)
    dyn.resources.get(api_version="v1", kind="Namespace").delete(name=name)
    dyn.resources.get(api_version="rbac.authorization.k8s.io/v1", kind="ClusterRoleBinding").delete(
        name=f"{name}-{runner_account.ACCOUNT}")
