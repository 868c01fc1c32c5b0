# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The chart a release is made of, as `helm show chart` and `helm show
values` give it, each asked once per run.

For a chart on disk (a path that exists: Helm then ignores --version) both
are its own files, Chart.yaml and values.yaml, at the top of the directory
or of the archive's one top directory: read here without a Helm process.
Where Helm might read them otherwise, Helm is asked as before: a
.helmignore that could leave either out, an archive that is not plainly
one chart, a Chart.yaml whose name or version is not plain text or not a
version Helm loads. A chart from a repository or registry is always Helm's.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
import zlib
from typing import Any, Dict, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import yaml
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm

CHART_FILE, VALUES_FILE = "Chart.yaml", "values.yaml"
_REQUIRED = ("apiVersion", "name", "version")  # Helm refuses a Chart.yaml without one
_MAX_FILE = 5 * 1024 * 1024  # Helm's largest file in a chart: bigger is Helm's to refuse
# What Helm's semver library reads as a version (Masterminds semver.NewVersion).
_SEMVER = re.compile(r"^v?\d+(\.\d+)?(\.\d+)?(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$")


class ChartSource:
    """The chart asked for: its metadata and default values, each read at most once."""

    def __init__(self, helm: Helm, ref: str, version: Optional[str]) -> None:
        self.helm, self.ref, self.version = helm, ref, version
        self._files: Optional[Dict[str, str]] = None
        self._metadata: Optional[Dict[str, Any]] = None
        self._values: Optional[str] = None

    @property
    def on_disk(self) -> bool:
        return os.path.exists(self.ref)

    def metadata(self) -> Dict[str, Any]:
        """Chart.yaml, as `helm show chart` gives it."""
        if self._metadata is None:
            local = self._local()
            self._metadata = _metadata(local[CHART_FILE]) if local else self.helm.show_chart(self.ref, self.version)
        return self._metadata or {}

    def values_text(self) -> str:
        """values.yaml, as `helm show values` gives it ('' when the chart has none)."""
        if self._values is None:
            local = self._local()
            args = ["show", "values", self.ref] + (["--version", self.version] if self.version else [])
            self._values = local.get(VALUES_FILE, "") if local else self.helm.run(args).stdout
        return self._values

    def _local(self) -> Optional[Dict[str, str]]:
        """The chart's own files, when it is on disk and loads plainly; None to ask Helm."""
        if self._files is None:
            files = top_files(self.ref) if self.on_disk else None
            self._files = files if files is not None and _metadata(files[CHART_FILE]) is not None else {}
        return self._files or None


def top_files(path: str) -> Optional[Dict[str, str]]:
    """Chart.yaml and values.yaml (if any) of the chart at path; None to leave it to Helm."""
    try:
        found = _from_dir(path) if os.path.isdir(path) else _from_archive(path)
    except (OSError, EOFError, ValueError):  # unreadable, not gzip, not tar, not UTF-8: Helm says what
        return None
    return found if found is not None and CHART_FILE in found else None


def chart_file(ref: str, path: str) -> Optional[str]:
    """One file of a chart on disk (`templates/crds.yaml`, as a rendered
    object's source names it); None when the chart is not on disk, or the
    file is not plainly there (a subchart still packed, say)."""
    if not os.path.exists(ref) or path.startswith(("/", "..")):
        return None
    try:
        return _file_in_dir(ref, path) if os.path.isdir(ref) else _file_in_archive(ref, path)
    except (OSError, EOFError, ValueError, zlib.error):
        return None


def _file_in_dir(ref: str, path: str) -> Optional[str]:
    full = os.path.join(ref, path)
    if not os.path.isfile(full) or os.path.getsize(full) > _MAX_FILE:
        return None
    with open(full, "rb") as handle:
        return handle.read().decode("utf-8-sig")


def _file_in_archive(ref: str, path: str) -> Optional[str]:
    import tarfile  # only for a chart archive on disk

    try:
        with tarfile.open(ref, "r:gz") as archive:
            member = next((m for m in archive if m.isreg() and m.size <= _MAX_FILE
                           and m.name.split("/", 1)[-1] == path), None)
            handle = archive.extractfile(member) if member is not None else None
            return handle.read().decode("utf-8-sig") if handle is not None else None
    except tarfile.TarError:
        return None


def _from_dir(path: str) -> Optional[Dict[str, str]]:
    if _may_ignore(os.path.join(path, ".helmignore")):
        return None
    found = {}
    for name in (CHART_FILE, VALUES_FILE):
        full = os.path.join(path, name)
        if os.path.isfile(full) and os.path.getsize(full) <= _MAX_FILE:
            with open(full, "rb") as handle:
                found[name] = handle.read().decode("utf-8-sig")
        elif os.path.lexists(full):
            return None  # not a plain file: Helm's to load or refuse
    return found


def _from_archive(path: str) -> Optional[Dict[str, str]]:
    """As Helm reads an archive: each file's path less its first part, cleaned."""
    import tarfile  # only for a chart archive on disk

    found: Dict[str, str] = {}
    try:
        with tarfile.open(path, "r:gz") as archive:
            for member in archive:
                if member.isdir():
                    continue
                parts = member.name.split("\\" if "\\" in member.name else "/")
                name = posixpath.normpath("/".join(parts[1:])) if len(parts) > 1 else "."
                if parts[0] == CHART_FILE or name == "." or name.startswith(("/", "..")):
                    return None  # Helm refuses such an archive, in its own words
                if name not in (CHART_FILE, VALUES_FILE):
                    continue
                handle = archive.extractfile(member) if member.isreg() and member.size <= _MAX_FILE else None
                if handle is None or name in found:
                    return None
                found[name] = handle.read().decode("utf-8-sig")
    except (tarfile.TarError, zlib.error):
        return None
    return found


def _may_ignore(helmignore: str) -> bool:
    """Whether a .helmignore could leave Chart.yaml or values.yaml out of the chart Helm loads."""
    if not os.path.exists(helmignore):
        return False
    with open(helmignore, encoding="utf-8-sig", errors="replace") as handle:
        rules = [r.strip() for r in handle if r.strip() and not r.strip().startswith("#")]
    return any(_may_match(rule) for rule in rules)


def _may_match(rule: str) -> bool:
    # A negated rule ignores every file it does not match (Helm's pkg/ignore);
    # a class or an escape is matched by Go's rules, not fnmatch's: assume it may.
    if rule.startswith("!") or any(c in rule for c in "[\\"):
        return True
    if rule.endswith("/"):
        return False  # directories only
    return any(fnmatch.fnmatchcase(name, rule.lstrip("/")) for name in (CHART_FILE, VALUES_FILE))


def _metadata(text: Optional[str]) -> Optional[Dict[str, Any]]:
    """Chart.yaml as a mapping, when its name and version are what Helm would read too."""
    if text is None:
        return None
    try:
        meta = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    if not isinstance(meta, dict) or not all(isinstance(meta.get(k), str) and meta[k] for k in _REQUIRED):
        return None
    return meta if _SEMVER.match(meta["version"]) and "/" not in meta["name"] else None
