"""Find the cluster the tests run against: $KUBECONFIG, or the local test bed.

The bed is started by ``tests/cluster/up`` and reused when it already runs; a
bed started here is stopped when the test session ends (``BED_KEEP=1`` keeps
it). Nothing in this file is specific to pytest, so the decision it makes can
be unit tested.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Optional
from support.paths import ROOT

CLUSTER = ROOT / "tests" / "cluster"


@dataclass(frozen=True)
class Cluster:
    kubeconfig: str
    is_bed: bool  # the local bed, as opposed to a cluster named by $KUBECONFIG
    started_here: bool


def bed_var(name: str) -> str:
    """A variable of tests/cluster/lib.sh (BED_BIN, KUBE_VERSION, BED_STATE...)."""
    out = subprocess.run(
        ["bash", "-c", f'source "{CLUSTER}/lib.sh" && printf %s "${name}"'],
        check=True, capture_output=True, text=True,
    )
    return out.stdout


def kubectl_bin(env: Optional[Mapping[str, str]] = None) -> str:
    env = os.environ if env is None else env
    return env.get("KUBECTL_BIN") or str(Path(bed_var("BED_BIN")) / "kubectl")


def _run(script: str) -> int:
    return subprocess.run([str(CLUSTER / script)], check=False).returncode


def resolve(
    env: Optional[Mapping[str, str]] = None,
    run: Callable[[str], int] = _run,
    state_dir: Optional[str] = None,
) -> Cluster:
    """Decide which cluster to use, starting the bed if it is needed.

    ``run`` executes one of the bed scripts (status, up) and returns its exit
    code; it is a parameter so the decision can be tested without a bed.
    """
    env = os.environ if env is None else env
    if env.get("KUBECONFIG"):
        bed_kubeconfig = os.path.join(state_dir or bed_var("BED_STATE"), "kubeconfig")
        return Cluster(env["KUBECONFIG"], env["KUBECONFIG"] == bed_kubeconfig, False)
    kubeconfig = os.path.join(state_dir or bed_var("BED_STATE"), "kubeconfig")
    if run("status") == 0:
        return Cluster(kubeconfig, True, False)
    if run("up") != 0:
        raise RuntimeError(
            "tests/cluster/up failed; its output is above. Fix it, or set "
            "KUBECONFIG to run the tests against an existing cluster."
        )
    return Cluster(kubeconfig, True, True)


def release(cluster: Cluster, env: Optional[Mapping[str, str]] = None,
            run: Callable[[str], int] = _run) -> None:
    """Stop the bed if this session started it, unless BED_KEEP=1."""
    env = os.environ if env is None else env
    if cluster.started_here and env.get("BED_KEEP") != "1":
        run("down")
