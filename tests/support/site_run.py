"""A site inventory of examples/ run on the bed, as an operator runs it.

The example is copied into a directory of its own and pointed at one
namespace and at the stock charts prepared under build/openstack-helm/ (with
openstack-helm's per-release values files linked beside them); its runs are
ansible-playbook processes, and what they did is read back from the cluster:
each service's ServiceLifecycle and the Phases its flows ran.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any, Dict, List, Optional

import yaml
from kubernetes import dynamic

from support import openstack_helm
from support.ansible import ROOT

GROUP = "lifecycle.openstack.org/v1alpha1"
BIN = Path(sys.executable).parent


def when(stamp: str) -> datetime:
    return datetime.strptime(stamp.replace("Z", "")[:19], "%Y-%m-%dT%H:%M:%S")


def services_of(example: str) -> List[str]:
    """The hosts of an example inventory's group openstack_services, in order."""
    inventory = yaml.safe_load((ROOT / "examples" / example / "inventory.yml").read_text())
    return list(inventory["all"]["children"]["openstack_services"]["hosts"])


class Site:
    """An example site copied into `directory`, pointed at `namespace`, and the runs of it."""

    def __init__(self, directory: Path, kubeconfig: str, dyn: dynamic.DynamicClient, namespace: str,
                 example: str = "site") -> None:
        self.dir, self.kubeconfig, self.dyn, self.namespace = directory, kubeconfig, dyn, namespace
        self.services = services_of(example)
        shutil.copytree(ROOT / "examples" / example, directory)
        group = self.dir / "group_vars" / "openstack_services.yml"
        shared = yaml.safe_load(group.read_text())
        shared.update(openstack_namespace=namespace, site_charts=str(openstack_helm.CACHE), phase_timeout=300)
        group.write_text(yaml.safe_dump(shared))
        for name in self.services:
            openstack_helm.chart(name)
        overrides = openstack_helm.CACHE / openstack_helm.OVERRIDES
        if not overrides.exists():  # as make site-charts links them
            overrides.symlink_to(openstack_helm.source_dir() / openstack_helm.OVERRIDES)
        # The mariadb chart's CRDs are cluster-wide: only one release owns them.
        crds = openstack_helm.shared_overrides(kubeconfig, "mariadb", "mariadb", namespace)
        if crds:
            values = self.host_vars("mariadb").get("values") or {}
            values.setdefault("manifests", {})["crds"] = False
            self.set_host_var("mariadb", "values", values)

    def host_vars(self, host: str) -> Dict[str, Any]:
        return yaml.safe_load((self.dir / "host_vars" / f"{host}.yml").read_text()) or {}

    def set_host_var(self, host: str, key: str, value: Any) -> None:
        path = self.dir / "host_vars" / f"{host}.yml"
        data = yaml.safe_load(path.read_text()) or {}
        data[key] = value
        path.write_text(yaml.safe_dump(data))

    def env(self) -> Dict[str, str]:
        # Results printed as JSON whatever the Makefile exports: the tests read the plan's lines whole.
        return dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", ANSIBLE_CALLBACK_RESULT_FORMAT="json",
                    KUBECONFIG=self.kubeconfig,
                    K8S_AUTH_KUBECONFIG=self.kubeconfig, HELM_BIN=openstack_helm.helm_bin(),
                    ANSIBLE_COLLECTIONS_PATH=str(ROOT / "build" / "collections"))

    def command(self, *args: str, playbook: str = "site.yml") -> List[str]:
        return [str(BIN / "ansible-playbook"), "-i", str(self.dir), str(ROOT / "playbooks" / playbook),
                "--forks", str(max(5, len(self.services))), *args]

    def run(self, *args: str, playbook: str = "site.yml",
            env: Optional[Dict[str, str]] = None) -> subprocess.CompletedProcess:
        return subprocess.run(self.command(*args, playbook=playbook), env=dict(self.env(), **(env or {})),
                              capture_output=True, text=True, check=False)

    def lifecycle(self, service: str) -> Dict[str, Any]:
        res = self.dyn.resources.get(api_version=GROUP, kind="ServiceLifecycle")
        found = res.get(namespace=self.namespace, label_selector=f"lifecycle.openstack.org/service={service}")
        items = found.to_dict()["items"]
        return items[0] if items else {}

    def phases(self, service: str) -> List[Dict[str, Any]]:
        res = self.dyn.resources.get(api_version=GROUP, kind="Phase")
        found = res.get(namespace=self.namespace, label_selector=f"lifecycle.openstack.org/service={service}")
        return sorted(found.to_dict()["items"], key=lambda p: p["metadata"]["creationTimestamp"])


def ok(run: subprocess.CompletedProcess) -> str:
    assert run.returncode == 0, (run.stdout + run.stderr)[-6000:]
    return run.stdout


def unchanged(out: str) -> None:
    """Every host of the run's recap reports changed=0."""
    recap = out[out.rindex("PLAY RECAP"):].splitlines()[1:]
    assert [line for line in recap if line.strip() and "changed=0" not in line] == [], recap
