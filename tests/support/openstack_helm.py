"""The real openstack-helm charts, as the tests use them.

The charts are read-only test data beside the checkout
(``<repo>/../shared/charts/openstack-helm``). A chart needs helm-toolkit as a
sibling directory (its dependency is ``file://../helm-toolkit``) and a
``helm dependency build``, which writes into the chart: so each chart is
copied once, with helm-toolkit, under ``build/openstack-helm/`` and built
there, again only when its sources change.

``install_infrastructure`` installs the releases every OpenStack service
needs (mariadb, memcached, rabbitmq) from the stock charts, reusing releases
that are deployed already, and returns once they are Ready.
``values_override`` names the file openstack-helm ships to run a chart at
one OpenStack release (its image tags), as an operator passes it to Helm.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import ContextManager, Dict, Iterator, List, Mapping, Optional, Sequence

from support import bed

SOURCE = bed.ROOT.parent / "shared" / "charts" / "openstack-helm"
CACHE = bed.ROOT / "build" / "openstack-helm"
TOOLKIT = "helm-toolkit"

# Values the bed would need for the stock charts to become Ready: none. The
# bed plays what they ask of a cluster (node labels, the "general" storage
# class, kubernetes-entrypoint ordering), so they install with their own
# defaults. An override added here must say why.
INFRASTRUCTURE: Dict[str, List[str]] = {
    "mariadb": [],
    "memcached": [],
    "rabbitmq": [],
}


# The mariadb chart's backup CronJob, as an upgrade's database backup uses it
# (plugins/module_utils/phase/db_backup.py): the CronJob, the backup and restore
# scripts in its ConfigMap (conf.backup.enabled), and the archives on a
# claim (pvc_backup; volume.backup.enabled is on by default) rather than on a
# node's hostPath, so a restore finds them wherever it is scheduled.
MARIADB_BACKUP = [
    "manifests.cron_job_mariadb_backup=true",
    "conf.backup.enabled=true",
    "manifests.pvc_backup=true",
]


# The mariadb chart also ships cluster-wide CustomResourceDefinitions (kept by
# Helm on uninstall). Only one release can own them: a mariadb release in a
# second namespace reuses them, as an operator would, with manifests.crds off.
MARIADB_CRD = "databases.mariadb.osh.openstack.org"


# The OpenStack releases openstack-helm ships values for, oldest first, and
# the distribution their images are built on:
# values_overrides/<chart>/<release>-<distro>.yaml.
RELEASES = ("2025.1", "2025.2", "2026.1")
DISTRO = "ubuntu_noble"
OVERRIDES = "values_overrides"


class ChartsMissing(FileNotFoundError):
    """The shared charts are not where the tests expect them."""


def source_dir(source: Optional[Path] = None) -> Path:
    """The directory that holds the stock charts, or a clear error naming it."""
    path = Path(source or SOURCE)
    if not (path / TOOLKIT / "Chart.yaml").is_file():
        raise ChartsMissing(
            f"the openstack-helm charts are not at {path}: the tests expect the shared "
            "test data (helm-toolkit, mariadb, memcached, rabbitmq, keystone, placement, nova, "
            "neutron, libvirt, openvswitch, cinder, barbican, values_overrides) "
            "in shared/charts/openstack-helm beside the checkout")
    return path


def values_override(name: str, release: str, source: Optional[Path] = None) -> Path:
    """The values file that runs chart ``name`` at OpenStack ``release``
    (``values_overrides/<chart>/<release>-ubuntu_noble.yaml``), passed to Helm
    with ``--values``: a test deploys the images of a named release, as an
    operator does, and an upgrade test switches from one file to the next.
    The files are read where they are; nothing writes to them."""
    src = source_dir(source)
    path = src / OVERRIDES / name / f"{release}-{DISTRO}.yaml"
    if not path.is_file():
        shipped = sorted(p.name[:-len(f"-{DISTRO}.yaml")]
                         for p in (src / OVERRIDES / name).glob(f"*-{DISTRO}.yaml"))
        raise ChartsMissing(
            f"openstack-helm ships no values for chart {name!r} at release {release!r}: "
            f"{path} does not exist (releases for {name}: {', '.join(shipped) or 'none'}; "
            f"the known releases are {', '.join(RELEASES)})")
    return path


def release_values(name: str, release: str, source: Optional[Path] = None) -> List[Path]:
    """``[values_override(name, release)]``, or ``[]`` for a chart that ships
    no release values at all (openvswitch: its image is not tied to an
    OpenStack release). A chart that ships some but not this release is an
    error, not a silent default."""
    if not (source_dir(source) / OVERRIDES / name).is_dir():
        return []
    return [values_override(name, release, source)]


def helm_bin(env: Optional[Mapping[str, str]] = None) -> str:
    env = os.environ if env is None else env
    return env.get("HELM_BIN") or env.get("HELM3_BIN") or str(Path(bed.bed_var("BED_BIN")) / "helm3")


def _tree_digest(*dirs: Path) -> str:
    """A digest of every file's path and content: the cache key of a chart."""
    digest = hashlib.sha256()
    for top in dirs:
        for path in sorted(p for p in top.rglob("*") if p.is_file()):
            digest.update(str(path.relative_to(top.parent)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


@contextmanager
def _locked(cache: Path, name: str = ".lock") -> Iterator[None]:
    """Several test sessions may prepare a chart or install a release at
    once: one at a time."""
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / name, "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def locked(name: str) -> ContextManager[None]:
    """What the cluster holds once (nova's ClusterRoles), one test session at
    a time on this machine: the file lock ``name`` beside the charts."""
    return _locked(CACHE, name)


def chart(name: str, source: Optional[Path] = None, cache: Optional[Path] = None,
          helm: Optional[str] = None) -> Path:
    """The chart's directory, copied beside helm-toolkit and dependency-built.

    Nothing is copied or built when the cached copy is of the same sources.
    """
    src = source_dir(source)
    cache = Path(cache or CACHE)
    if not (src / name / "Chart.yaml").is_file():
        raise ChartsMissing(f"there is no chart {name!r} in {src}")
    with _locked(cache):
        key = _tree_digest(src / name, src / TOOLKIT)
        stamp = cache / f".{name}.built"
        target = cache / name
        if stamp.is_file() and stamp.read_text(encoding="utf-8") == key and target.is_dir():
            return target
        for part in (name, TOOLKIT):
            shutil.rmtree(cache / part, ignore_errors=True)
            shutil.copytree(src / part, cache / part)
        if name != TOOLKIT:
            subprocess.run([helm or helm_bin(), "dependency", "build", str(target)],
                           check=True, capture_output=True, text=True)
        stamp.write_text(key, encoding="utf-8")
        return target


def _helm(kubeconfig: str, *args: str, helm: Optional[str] = None,
          check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, KUBECONFIG=kubeconfig)
    result = subprocess.run([helm or helm_bin(), *args], env=env, capture_output=True, text=True, check=False)
    if check and result.returncode != 0:
        raise RuntimeError(f"helm {' '.join(args[:3])} failed: {result.stderr.strip()}")
    return result


def deployed(kubeconfig: str, release: str, namespace: str) -> bool:
    result = _helm(kubeconfig, "status", release, "-n", namespace, "-o", "json", check=False)
    if result.returncode != 0:
        return False
    return json.loads(result.stdout).get("info", {}).get("status") == "deployed"


def shared_overrides(kubeconfig: str, name: str, release: str, namespace: str) -> List[str]:
    """Overrides for what another release of the cluster owns already."""
    if name != "mariadb":
        return []
    env = dict(os.environ, KUBECONFIG=kubeconfig)
    found = subprocess.run([bed.kubectl_bin(), "get", "crd", MARIADB_CRD, "-o", "json",
                            "--ignore-not-found"], env=env, check=True, capture_output=True, text=True)
    if not found.stdout.strip():
        return []
    annotations = json.loads(found.stdout)["metadata"].get("annotations") or {}
    owner = (annotations.get("meta.helm.sh/release-name"),
             annotations.get("meta.helm.sh/release-namespace"))
    return [] if owner == (release, namespace) else ["manifests.crds=false"]


def install(kubeconfig: str, name: str, namespace: str, overrides: Sequence[str] = (),
            timeout: str = "10m", release: Optional[str] = None) -> None:
    """Install one stock chart and wait for it (workloads Ready, jobs done),
    or, when the release is deployed already, only wait for it."""
    release = release or name
    with _locked(CACHE, f".install-{namespace}-{release}.lock"):
        if not deployed(kubeconfig, release, namespace):
            args = ["upgrade", "--install", release, str(chart(name)), "-n", namespace,
                    "--create-namespace", "--wait", "--wait-for-jobs", "--timeout", timeout]
            for value in [*overrides, *shared_overrides(kubeconfig, name, release, namespace)]:
                args += ["--set", value]
            _helm(kubeconfig, *args)
    wait_ready(kubeconfig, release, namespace, timeout)


def _kubectl(kubeconfig: str, *args: str) -> str:
    env = dict(os.environ, KUBECONFIG=kubeconfig)
    result = subprocess.run([bed.kubectl_bin(), *args], env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args[:2])} failed: {result.stderr.strip()}")
    return result.stdout


def wait_ready(kubeconfig: str, release: str, namespace: str, timeout: str = "10m",
               jobs: bool = False) -> None:
    """Each StatefulSet, Deployment and DaemonSet of the release rolled out
    and available (a DaemonSet on every node it targets), and with ``jobs``
    each of its Jobs complete (kubectl rollout status and wait watch; they do
    not poll). Jobs are waited for only when asked: a reused release may own
    Jobs a test failed on purpose (a CronJob's backup)."""
    selector = f"release_group={release}"
    for workload in _kubectl(kubeconfig, "get", "statefulsets,deployments,daemonsets", "-n", namespace,
                             "-l", selector, "-o", "name").split():
        _kubectl(kubeconfig, "rollout", "status", workload, "-n", namespace, f"--timeout={timeout}")
    names = _kubectl(kubeconfig, "get", "jobs", "-n", namespace, "-l", selector, "-o", "name").split() if jobs else []
    if names:
        _kubectl(kubeconfig, "wait", "--for=condition=Complete", *names, "-n", namespace,
                 f"--timeout={timeout}")


def install_infrastructure(kubeconfig: str, namespace: str = "openstack",
                           timeout: str = "10m") -> None:
    """mariadb, memcached and rabbitmq from the stock charts, Ready."""
    for name, overrides in INFRASTRUCTURE.items():
        install(kubeconfig, name, namespace, overrides, timeout)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Prepare charts from the command line (make site-charts): each printed
    as the path an inventory points at."""
    import argparse  # pylint: disable=import-outside-toplevel

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--source", type=Path, default=SOURCE, help="where the stock charts are")
    parser.add_argument("charts", nargs="+")
    args = parser.parse_args(argv)
    try:
        for name in args.charts:
            print(chart(name, source=args.source))
    except (ChartsMissing, subprocess.CalledProcessError) as exc:
        print(f"cannot prepare the charts: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
