# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Helm command line, for Helm 3 and Helm 4.

Every call is an argument list (never a shell), values travel in private
temporary files (never on the command line, where any local user could read
them), and everything Helm prints goes through the redactor before it is
returned or raised. The flags that differ between the two majors are looked
up here, nowhere else.
"""

from __future__ import annotations

import copy
import json
import os
import re
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence

from ansible_collections.lcm.openstack.plugins.module_utils.common import transient
from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import yaml
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import namespace_missing
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import Redactor
from ansible_collections.lcm.openstack.plugins.module_utils.helm import storage
from ansible_collections.lcm.openstack.plugins.module_utils.helm.process import HelmError, Result, Started

MIN_VERSION = (3, 8, 0)  # OCI charts without the experimental flag
# What the apiserver says, through Helm, to a write into a namespace that does not exist.
_NAMESPACE_NOT_FOUND = re.compile(r'\bnamespaces "([^"]+)" not found')
# What Helm prints (client-go's words) when its connection to the apiserver
# broke, or the apiserver could not answer for a moment: nothing about the
# release. Helm retries none of it itself.
_CONNECTION_LOST = re.compile(
    r"connection reset by peer|connection refused|broken pipe|unexpected EOF|[:\s]EOF\s*$|"
    r"http2: client connection lost|i/o timeout|TLS handshake timeout|use of closed network connection|"
    r"the server is currently unable to handle the request|etcdserver: request timed out|"
    r"the server has received too many requests", re.IGNORECASE | re.MULTILINE)
# Subcommands that only read: run again, with backoff, when the connection broke.
READS = frozenset({"history", "status", "get", "show", "list", "version"})
READ_RETRY_SECONDS = 30.0
# Flags that Helm 4 renamed.
FLAGS = {
    3: {"atomic": ["--atomic"], "force": ["--force"], "wait": ["--wait"],
        # Helm 3 always merges on the client side, which takes back any field it sets.
        "client_side": [], "server_side": None, "force_conflicts": []},
    4: {"atomic": ["--rollback-on-failure"], "force": ["--force-replace"], "wait": ["--wait=watcher"],
        "client_side": ["--server-side=false"], "server_side": ["--server-side=true"],
        "force_conflicts": ["--force-conflicts"]},
}


def connection_lost(stderr: str) -> bool:
    """Helm failed because its connection to the apiserver broke, not on an answer."""
    return bool(_CONNECTION_LOST.search(stderr or ""))


def _read_lost(args: Sequence[str], result: Result) -> bool:
    """A read that failed because its connection broke (run retries those)."""
    return result.rc != 0 and args[0] in READS and connection_lost(result.stderr)


@dataclass
class Helm:
    binary: str
    env: Dict[str, str] = field(default_factory=dict)
    redactor: Redactor = field(default_factory=Redactor)
    timeout: float = 900
    _version: Optional[str] = None

    # -- running -------------------------------------------------------------
    def run(self, args: Sequence[str], check: bool = True, timeout: Optional[float] = None) -> Result:
        """Run Helm once; a read whose connection broke runs again, within READ_RETRY_SECONDS."""
        end = time.monotonic() + READ_RETRY_SECONDS
        attempt = 0
        while True:
            result = self._run_once(args, timeout)
            attempt += 1
            pause = transient.backoff(attempt)
            if not _read_lost(args, result) or time.monotonic() + pause > end:
                break
            time.sleep(pause)
        if check and result.rc != 0:
            raise self.error(result)
        return result

    def run_together(self, calls: Sequence[Sequence[str]], meanwhile: Optional[Callable[[], Any]] = None) -> List[Result]:
        """Helm on each of `calls` at once; their results in order, as
        run(check=False) gives them. For the reads one decision needs: a Helm
        process spends its time starting and waiting on the apiserver, so a
        few together cost about what one does. `meanwhile` is called in this
        process while they run (making the cluster client, say). A read whose
        connection broke runs again on its own, with run's retries."""
        started: List[Started] = []
        try:
            for args in calls:
                started.append(self._start(args, None))
            if meanwhile is not None:
                meanwhile()
            results = [one.result() for one in started]
        finally:
            for one in started:
                one.stop()
        return [self.run(args, check=False) if _read_lost(args, result) else result
                for args, result in zip(calls, results)]

    def _run_once(self, args: Sequence[str], timeout: Optional[float]) -> Result:
        started = self._start(args, timeout)
        try:
            return started.result()
        finally:
            started.stop()

    def _start(self, args: Sequence[str], timeout: Optional[float]) -> Started:
        command = [self.binary, *args]
        env = dict(os.environ)
        env.update(self.env)
        return Started(command, env, timeout or self.timeout, self.redactor)

    def error(self, result: Result, what: str = "") -> HelmError:
        """A HelmError with Helm's output, credentials masked; a namespace
        that does not exist said as such, with the option that creates it."""
        stdout, stderr = self.redactor.redact(result.stdout), self.redactor.redact(result.stderr)
        reason = stderr.strip().removeprefix('Error: ')
        gone = _NAMESPACE_NOT_FOUND.search(stderr)
        if gone:
            reason = str(namespace_missing(gone.group(1), helm=True))
        return HelmError(f"{what or 'helm ' + result.command[1]} failed: {reason}",
                         command=" ".join(result.command), stdout=stdout, stderr=stderr)

    @property
    def version(self) -> str:
        if self._version is None:
            # Imported here: the phase module starts with no more modules than kubernetes.core.k8s.
            from ansible_collections.lcm.openstack.plugins.module_utils.helm import versions  # pylint: disable=import-outside-toplevel

            self._version = versions.version_of(self.binary, self._asked_version)
        return self._version

    def _asked_version(self) -> str:
        return self.run(["version", "--template", "{{.Version}}"]).stdout.strip()

    @property
    def major(self) -> int:
        return int(_parse_version(self.version)[0])

    def check_version(self) -> None:
        # The storage driver first: under HELM_DRIVER=memory Helm 3 fails even
        # `helm version`, in words that do not name the variable.
        storage.kind(dict(os.environ, **self.env))
        parsed = _parse_version(self.version)
        if parsed < MIN_VERSION or parsed[0] not in FLAGS:
            raise HelmError(f"helm {self.version} at {self.binary} is not supported; use Helm 3 "
                            f"(3.{MIN_VERSION[1]} or newer) or Helm 4")

    def flag(self, name: str) -> List[str]:
        flags = FLAGS[self.major][name]
        if flags is None:
            raise HelmError(f"Helm {self.major} has no {name.replace('_', '-')} mode; use Helm 4, or leave "
                            "server_side unset")
        return list(flags)

    @contextmanager
    def values_args(self, values: Optional[Mapping[str, Any]], values_files: Sequence[str] = (),
                    set_values: Sequence[Mapping[str, Any]] = ()) -> Iterator[List[str]]:
        """--values for each file, then the values mapping through a 0600 file, then --set*."""
        args: List[str] = []
        for path in values_files:
            if not os.path.isfile(path):
                raise HelmError(f"values file {path} does not exist")
            args += ["--values", path]
        with tempfile.TemporaryDirectory(prefix="lcm-helm-") as tmp:
            if values:
                path = os.path.join(tmp, "values.yaml")
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    yaml.safe_dump(dict(values), handle)
                args += ["--values", path]
            for item in set_values:
                args += _set_arg(item)
            yield args

    # -- reading a release ------------------------------------------------------
    def status(self, release: str, namespace: str) -> Optional[Dict[str, Any]]:
        return self.status_of(self.run(status_args(release, namespace), check=False))

    def status_of(self, result: Result) -> Optional[Dict[str, Any]]:
        """`helm status --output json`'s release (its last revision, manifest
        and user-supplied values); None when there is no release."""
        if result.rc != 0:
            if "not found" in result.stderr:
                return None
            raise self.error(result)
        return json.loads(result.stdout)

    def history(self, release: str, namespace: str) -> List[Dict[str, Any]]:
        return self.history_of(self.run(history_args(release, namespace), check=False))

    def history_of(self, result: Result) -> List[Dict[str, Any]]:
        """`helm history --output json`'s revisions, oldest first; none without a release."""
        if result.rc != 0:
            if "not found" in result.stderr:
                return []
            raise self.error(result)
        return json.loads(result.stdout or "[]")

    def get_values(self, release: str, namespace: str, revision: Optional[int] = None,
                   all_values: bool = False) -> Dict[str, Any]:
        args = ["get", "values", release, "--namespace", namespace, "--output", "json"]
        if revision:
            args += ["--revision", str(revision)]
        if all_values:
            args.append("--all")
        return json.loads(self.run(args).stdout or "null") or {}

    def get_manifest(self, release: str, namespace: str, revision: Optional[int] = None) -> str:
        args = ["get", "manifest", release, "--namespace", namespace]
        if revision:
            args += ["--revision", str(revision)]
        return self.run(args).stdout

    def get_hooks(self, release: str, namespace: str) -> str:
        """The hooks of the release's last revision (they are not in its manifest)."""
        return self.run(["get", "hooks", release, "--namespace", namespace]).stdout

    def template(self, release: str, chart: str, namespace: str, chart_version: Optional[str],
                 value_args: List[str], extra: Sequence[str] = ()) -> str:
        return self.run(template_args(release, chart, namespace, chart_version, value_args, extra)).stdout

    def show_chart(self, chart: str, chart_version: Optional[str]) -> Dict[str, Any]:
        args = ["show", "chart", chart]
        if chart_version:
            args += ["--version", chart_version]
        return yaml.safe_load(self.run(args).stdout) or {}


def status_args(release: str, namespace: str) -> List[str]:
    return ["status", release, "--namespace", namespace, "--output", "json"]


def history_args(release: str, namespace: str) -> List[str]:
    return ["history", release, "--namespace", namespace, "--output", "json", "--max", "256"]


def template_args(release: str, chart: str, namespace: str, chart_version: Optional[str],
                  value_args: List[str], extra: Sequence[str] = ()) -> List[str]:
    args = ["template", release, chart, "--namespace", namespace, *value_args, *extra]
    if chart_version:
        args += ["--version", chart_version]
    return args


def merge_values(base: Mapping[str, Any], over: Mapping[str, Any]) -> Dict[str, Any]:
    """Helm's way of layering values: mappings merge key by key, anything else replaces."""
    out = copy.deepcopy(dict(base))
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge_values(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def merged_values(values_files: Sequence[str], values: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """The values asked for: the files, then the mapping, merged as Helm merges them (the
    values a release stores); a file that cannot be read is named."""
    merged: Dict[str, Any] = {}
    for path in values_files:
        try:
            with open(path, encoding="utf-8") as handle:
                merged = merge_values(merged, yaml.safe_load(handle) or {})
        except (OSError, yaml.YAMLError) as exc:
            raise InputError(f"values file {path} cannot be read (values_files): {exc}") from exc
    return merge_values(merged, values or {})


def _parse_version(version: str) -> tuple:
    match = re.match(r"v?(\d+)\.(\d+)\.(\d+)", version or "")
    if not match:
        raise HelmError(f"cannot read the helm version from {version!r}")
    return tuple(int(p) for p in match.groups())


_SET_FLAGS = {"raw": "--set", "string": "--set-string", "json": "--set-json",
              "file": "--set-file", "literal": "--set-literal"}


def _set_arg(item: Mapping[str, Any]) -> List[str]:
    kind = item.get("value_type") or "raw"
    if kind not in _SET_FLAGS:
        raise HelmError(f"set_values: value_type {kind!r} is not one of {', '.join(_SET_FLAGS)}")
    return [_SET_FLAGS[kind], str(item["value"])]


def find_helm(helm_binary: Optional[str], env: Mapping[str, str]) -> str:
    """The helm binary: the option, else $HELM_BIN, else `helm` on PATH."""
    import shutil

    candidate = helm_binary or env.get("HELM_BIN") or shutil.which("helm")
    if not candidate or not (os.path.isfile(candidate) and os.access(candidate, os.X_OK)):
        raise HelmError(
            f"helm binary not found ({candidate or 'helm is not on PATH'}); "
            "set the binary_path option (alias helm_binary) or the HELM_BIN environment variable "
            "to the path of Helm 3 or Helm 4")
    return candidate
