"""Run one of the collection's modules the way Ansible does, and read its result.

Tests go through `ansible localhost -m lcm.openstack.<module>` rather than
calling the Python functions, so argument parsing, check mode, diff mode and
the returned JSON are what users get.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple
from support.paths import ROOT

BIN = Path(sys.executable).parent
# The default stdout callback's plain text, as a test reads it, whatever the
# caller's environment sets (`make test` exports ANSIBLE_FORCE_COLOR and a
# yaml result format; FORCE_COLOR wins over NOCOLOR).
PLAIN_TEXT = {"ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORCE_COLOR": "0", "ANSIBLE_CALLBACK_RESULT_FORMAT": "json",
              "ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.default"}


def module_command(module: str, args: Mapping[str, Any], kubeconfig: Optional[str] = None,
                   check: bool = False, diff: bool = False, env: Optional[Mapping[str, str]] = None,
                   verbosity: int = 0) -> Tuple[List[str], Dict[str, str]]:
    """The `ansible localhost -m` command line and environment of one module call."""
    cmd = [str(BIN / "ansible"), "localhost", "-m", f"lcm.openstack.{module}", "-a", json.dumps(args)]
    if check:
        cmd.append("--check")
    if diff:
        cmd.append("--diff")
    if verbosity:
        cmd.append("-" + "v" * verbosity)
    full_env = dict(os.environ)
    full_env.update({
        "ANSIBLE_COLLECTIONS_PATH": str(ROOT / "build" / "collections"),
        "ANSIBLE_LOAD_CALLBACK_PLUGINS": "1",
        "ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json",
        "ANSIBLE_LOCALHOST_WARNING": "false",
        "ANSIBLE_INVENTORY_UNPARSED_WARNING": "false",
        "ANSIBLE_NOCOLOR": "1",
    })
    if kubeconfig:
        full_env["K8S_AUTH_KUBECONFIG"] = kubeconfig
    full_env.update(env or {})
    return cmd, full_env


def run_module(module: str, args: Mapping[str, Any], kubeconfig: Optional[str] = None,
               check: bool = False, diff: bool = False,
               env: Optional[Mapping[str, str]] = None, verbosity: int = 0) -> Dict[str, Any]:
    """The module's result dict, with `failed` set when the task failed."""
    cmd, full_env = module_command(module, args, kubeconfig, check, diff, env, verbosity)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=full_env, check=False)
    return module_result(cmd, proc.returncode, proc.stdout, proc.stderr, verbosity)


def module_result(cmd: List[str], rc: int, stdout: str, stderr: str, verbosity: int = 0) -> Dict[str, Any]:
    """The result dict from what `ansible localhost -m` printed."""
    # With -v and more, Ansible prints its configuration before the JSON callback's document.
    document = stdout[stdout.find("\n{") + 1:] if verbosity and not stdout.startswith("{") else stdout
    try:
        out = json.loads(document)
    except ValueError as exc:
        raise AssertionError(f"no JSON from {' '.join(cmd[:4])}: rc={rc}\n"
                             f"stdout: {stdout[-3000:]}\nstderr: {stderr[-3000:]}") from exc
    result = out["plays"][0]["tasks"][0]["hosts"]["localhost"]
    result["_raw"] = stdout + stderr
    return result
