"""openstack-helm's compute kit, deployed with plain Helm as openstack-helm's
own scripts do (deployment/compute-kit.sh, libvirt.sh, openvswitch.sh in the
shared charts), for tests that need it as a site would have it.

The order is the scripts': the infrastructure (mariadb, memcached, rabbitmq),
then keystone, then placement, each Ready before the next; then openvswitch,
libvirt, nova and neutron side by side, left to their kubernetes-entrypoint
init containers to sort out (neutron's agents wait for nova's API, nova-compute
for a libvirt pod on its node, libvirt for neutron's openvswitch agent on its
node, that agent for an openvswitch pod). Each chart gets the release's
values_overrides file where openstack-helm ships one, and the few values the
scripts set that change what Kubernetes runs (VALUES). No ``--wait``: the
scripts use none, and with it Helm would wait for nova's and neutron's
workloads before it runs the post-install hooks (db-sync, ks-user...) that
those workloads wait for.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from contextlib import contextmanager
from typing import Any, Dict, Iterator, List, Mapping, Optional

import yaml

from support import bed, openstack_helm

RELEASE = "2025.2"
ONE_BY_ONE = ("keystone", "placement")
SIDE_BY_SIDE = ("openvswitch", "libvirt", "nova", "neutron")
KIT = ONE_BY_ONE + SIDE_BY_SIDE

# The values of the scripts that decide what the cluster runs; the rest they
# set (nova's virt_type, neutron's tunnel interface and bridge mappings) is
# agent configuration inside the containers. No Ceph: nova and libvirt would
# otherwise mount the ceph-etc ConfigMap and pvc-ceph-client-key Secret of a
# Ceph deployment, and wait for them as a kubelet does (CEPH_ENABLED=false
# in the scripts when the site has no Ceph).
VALUES: Dict[str, Dict[str, Any]] = {
    "nova": {
        "conf": {"ceph": {"enabled": False}},
        "bootstrap": {"wait_for_computes": {"enabled": True}},
        "jobs": {"cell_setup": {"extended_wait": {"enabled": True}}},
    },
    "libvirt": {"conf": {"ceph": {"enabled": False}}},
    "neutron": {"labels": {"agent": {"l3": {"node_selector_key": "l3-agent",
                                            "node_selector_value": "enabled"}}}},
}

# nova-compute and nova's tests wait for the image service (glance-api, the
# endpoints.image host of nova's values). glance is not among the shared
# charts; openstack-helm's CI deploys it before the compute kit. This stands
# in for it: a Deployment and its Service, Ready as any pod of the bed.
IMAGE_SERVICE = "glance-api"


def image_service(name: str = IMAGE_SERVICE) -> List[Dict[str, Any]]:
    labels = {"application": "glance", "component": "api", "release_group": "glance-stand-in"}
    return [
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": labels},
         "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                  "template": {"metadata": {"labels": labels},
                               "spec": {"containers": [{"name": name, "image": "registry.invalid/glance:stand-in",
                                                        "ports": [{"containerPort": 9292}]}]}}}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "labels": labels},
         "spec": {"selector": labels, "ports": [{"name": "g-api", "port": 9292}]}},
    ]


def helm_args(name: str, namespace: str, values_dir: str, release: str = RELEASE) -> List[str]:
    """The ``helm upgrade --install`` of one chart of the kit."""
    args = ["upgrade", "--install", name, str(openstack_helm.chart(name)), "-n", namespace,
            "--timeout", "10m"]
    for path in openstack_helm.release_values(name, release):
        args += ["--values", str(path)]
    if name in VALUES:
        path = os.path.join(values_dir, f"{name}.yaml")
        with open(path, "w", encoding="utf-8") as out:
            yaml.safe_dump(VALUES[name], out)
        args += ["--values", path]
    return args


def _run(kubeconfig: str, *args: str, stdin: str = "") -> str:
    env = dict(os.environ, KUBECONFIG=kubeconfig)
    result = subprocess.run(list(args), env=env, input=stdin, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{os.path.basename(args[0])} {' '.join(args[1:4])} failed: {result.stderr.strip()}")
    return result.stdout


def _install(kubeconfig: str, name: str, namespace: str, values_dir: str, release: str,
             took: Dict[str, float], errors: Dict[str, str]) -> None:
    """One chart installed and Ready; its time from the helm command to Ready."""
    start = time.monotonic()
    try:
        _run(kubeconfig, openstack_helm.helm_bin(), *helm_args(name, namespace, values_dir, release))
        openstack_helm.wait_ready(kubeconfig, name, namespace, jobs=True)
    except RuntimeError as exc:
        errors[name] = str(exc)
    took[name] = round(time.monotonic() - start, 1)


def deploy(kubeconfig: str, namespace: str, values_dir: str, release: str = RELEASE) -> Dict[str, float]:
    """The kit in ``namespace``, every release Ready; returns the seconds each
    took to become Ready (the four side by side each from the common start)."""
    took: Dict[str, float] = {}
    errors: Dict[str, str] = {}
    start = time.monotonic()
    openstack_helm.install_infrastructure(kubeconfig, namespace)
    took["infrastructure"] = round(time.monotonic() - start, 1)
    for name in ONE_BY_ONE:
        _install(kubeconfig, name, namespace, values_dir, release, took, errors)
        if errors:
            raise RuntimeError(f"the compute kit did not deploy: {errors}")
    _run(kubeconfig, bed.kubectl_bin(), "apply", "-n", namespace, "-f", "-",
         stdin=yaml.safe_dump_all(image_service()))
    threads = [threading.Thread(target=_install, args=(kubeconfig, name, namespace, values_dir, release,
                                                       took, errors)) for name in SIDE_BY_SIDE]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise RuntimeError(f"the compute kit did not deploy: {errors}")
    took["total"] = round(time.monotonic() - start, 1)
    return took


def remove(kubeconfig: str, namespace: str) -> None:
    """Uninstall the kit's releases without their delete hooks (the namespace
    goes next anyway), so nova's cluster-wide objects go with them."""
    for name in reversed(KIT):
        _helm_quiet(kubeconfig, "uninstall", name, "-n", namespace, "--no-hooks", "--ignore-not-found")


def _helm_quiet(kubeconfig: str, *args: str) -> None:
    subprocess.run([openstack_helm.helm_bin(), *args], env=dict(os.environ, KUBECONFIG=kubeconfig),
                   capture_output=True, text=True, check=False)


# What nova renders cluster-wide, named after the service rather than the
# release: one cluster holds one nova release.
NOVA_CLUSTER_OBJECTS = ("nova-bootstrap", "nova-cell-setup")


def _owner(kubeconfig: str, kind: str, name: str) -> Optional[str]:
    """The namespace whose nova the object serves: Helm's release namespace,
    else (an object another tool applied) its binding's ServiceAccount's;
    None when the object does not exist."""
    found = _run(kubeconfig, bed.kubectl_bin(), "get", kind, name, "--ignore-not-found", "-o", "json").strip()
    if not found:
        return None
    obj = json.loads(found)
    annotations = obj["metadata"].get("annotations") or {}
    subjects = obj.get("subjects") or [{}]
    return annotations.get("meta.helm.sh/release-namespace") or subjects[0].get("namespace") or ""


def clear_leftovers(kubeconfig: str, namespace: str) -> None:
    """nova's cluster-wide objects left behind for a namespace that is gone
    or going are deleted (deleting a namespace takes none of them); those of
    a nova in another namespace still Active stop the deploy, naming it."""
    kubectl = bed.kubectl_bin()
    for name in NOVA_CLUSTER_OBJECTS:
        owners = {kind: _owner(kubeconfig, kind, name) for kind in ("clusterrolebinding", "clusterrole")}
        found = {kind: owner for kind, owner in owners.items() if owner is not None}
        owner = next((o for o in found.values() if o), "")
        if not found or owner == namespace:
            continue
        if owner and _run(kubeconfig, kubectl, "get", "namespace", owner, "--ignore-not-found", "-o",
                          "jsonpath={.status.phase}").strip() == "Active":
            raise RuntimeError(
                f"nova's ClusterRole {name} serves namespace {owner}, and one cluster holds one nova: "
                f"remove that nova first (helm uninstall nova -n {owner})")
        for kind in found:
            _run(kubeconfig, kubectl, "delete", kind, name, "--ignore-not-found")


@contextmanager
def deployed(kubeconfig: str, namespace: str, values_dir: str,
             release: str = RELEASE) -> Iterator[Mapping[str, float]]:
    """The kit deployed for the block, removed after it.

    One cluster holds one nova release (NOVA_CLUSTER_OBJECTS): sessions on
    this machine that deploy the kit through here take turns, and leftovers
    of a removed namespace are cleared first."""
    with openstack_helm.locked(".compute-kit.lock"):
        clear_leftovers(kubeconfig, namespace)
        try:
            yield deploy(kubeconfig, namespace, values_dir, release)
        finally:
            remove(kubeconfig, namespace)
