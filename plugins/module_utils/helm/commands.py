# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Helm command lines that change a release: an upgrade (which installs
a release that is not there) and a rollback, from the request's options.
Flags that differ between Helm 3 and 4 come from the Helm in use
(`Helm.flag`)."""

from __future__ import annotations

from typing import Any, List

from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm


def upgrade_args(helm: Helm, req: Any, value_args: List[str], no_hooks: bool = False) -> List[str]:
    """`helm upgrade --install` of the request; `no_hooks` to adopt kept hooks (helm/keep.py)."""
    args = ["upgrade", req.name, req.chart, "--install", "--namespace", req.namespace,
            "--timeout", f"{req.timeout}s", *value_args]
    if no_hooks:
        args.append("--no-hooks")
    if req.chart_version:
        args += ["--version", req.chart_version]
    if req.create_namespace:
        args.append("--create-namespace")
    if req.history_max is not None:
        args += ["--history-max", str(req.history_max)]
    if req.description:
        args += ["--description", req.description]
    if req.reset_values:
        args.append("--reset-values")
    if req.reuse_values:
        args.append("--reuse-values")
    if req.force:
        args += helm.flag("force")
    args += apply_mode(helm, req)
    if getattr(req, "force_conflicts", False):
        # A drift corrected by a server-side apply: the fields edited by hand belong to another field manager.
        args += helm.flag("force_conflicts")
    if req.atomic:
        args += helm.flag("atomic")
    elif req.helm_wait:
        args += helm.flag("wait")
    return args


def rollback_args(helm: Helm, req: Any, target: int) -> List[str]:
    """`helm rollback` of the request's release to revision `target`."""
    args = ["rollback", req.name, str(target), "--namespace", req.namespace, "--timeout", f"{req.timeout}s"]
    if req.force:
        args += helm.flag("force")
    args += apply_mode(helm, req)
    if req.helm_wait:
        args += helm.flag("wait")
    return args


def apply_mode(helm: Helm, req: Any) -> List[str]:
    """Helm 4's server-side or client-side apply, as asked; nothing when not asked."""
    if req.server_side is None:
        return []
    return helm.flag("server_side" if req.server_side else "client_side")
