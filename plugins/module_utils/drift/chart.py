# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether the chart asked for is the one the deployed revision was made of.

Helm keeps the chart in each revision: its Chart.yaml, its templates, its
default values and its other files. The name and version are compared
always. A chart on disk (a directory or an archive) can change without a new
version, as a chart under development does: its templates, values.yaml and
files are compared too, file by file, and named where they differ. A chart
from a repository is what its version says: a published version does not
change.
"""

from __future__ import annotations

import base64
import os
import tarfile
from typing import Any, Dict, List, Mapping, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import yaml
from ansible_collections.lcm.openstack.plugins.module_utils.drift.values import normalised

CHART_FILE, VALUES_FILE = "Chart.yaml", "values.yaml"
# Files Helm keeps apart from `files`: Chart.yaml as metadata, the values, the schema, the lock.
_APART = (CHART_FILE, VALUES_FILE, "values.schema.json", "Chart.lock", "requirements.yaml", "requirements.lock")


def changes(ref: str, version: str, stored: Mapping[str, Any]) -> List[str]:
    """What differs between the chart `ref` (at `version` for a repository's)
    and `stored` (a release record's `chart`); [] when nothing does."""
    meta = stored.get("metadata") or {}
    deployed = f"{meta.get('name')}-{meta.get('version')}"
    local = _files(ref) if os.path.exists(ref) else None
    if local is None:
        name = ref.rstrip("/").rsplit("/", 1)[-1]
        if name != meta.get("name") or (version and version.lstrip("v") != str(meta.get("version"))):
            return [f"{deployed} -> {name}-{version or '(latest)'}"]
        return []
    ours = yaml.safe_load(local.get(CHART_FILE) or "") or {}
    if (ours.get("name"), str(ours.get("version"))) != (meta.get("name"), str(meta.get("version"))):
        return [f"{deployed} -> {ours.get('name')}-{ours.get('version')}"]
    kept = _stored_files(stored)
    # A template added is a change; another file Helm did not keep may be one its .helmignore leaves out.
    names = set(kept) | {n for n in local if n.startswith("templates/")}
    out = [name for name in sorted(names) if name not in _APART and local.get(name) != kept.get(name)]
    ours_values = _without_helm_sections(normalised(yaml.safe_load(local.get(VALUES_FILE) or "")), meta)
    if ours_values != _without_helm_sections(normalised(stored.get("values")), meta):
        out.append(VALUES_FILE)
    return [f"{deployed} {name}" for name in out]


def _without_helm_sections(values: Mapping[str, Any], meta: Mapping[str, Any]) -> Dict[str, Any]:
    """The chart's values less what Helm (3 and 4) writes into them as it coalesces: an empty
    `global` in each dependency's section, the section made for it when values.yaml had none.
    The dependencies are those Chart.yaml lists, or, listed elsewhere (requirements.yaml), any
    section that holds nothing but that `global`."""
    listed = {str(dep.get("alias") or dep.get("name")) for dep in meta.get("dependencies") or []}
    out = dict(values)
    for key, section in values.items():
        if not isinstance(section, Mapping) or section.get("global") != {}:
            continue
        rest = {k: v for k, v in section.items() if k != "global"}
        if rest and key in listed:
            out[key] = rest
        elif not rest:
            out.pop(key)
    return out


def _stored_files(stored: Mapping[str, Any]) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for group in ("templates", "files"):
        for entry in stored.get(group) or []:
            out[str(entry.get("name"))] = base64.b64decode(entry.get("data") or "").decode("utf-8", "replace")
    return out


def _files(ref: str) -> Optional[Dict[str, str]]:
    """The chart's own files (its subcharts' left out, as Helm keeps them), by path inside it."""
    if os.path.isdir(ref):
        return _from_dir(ref)
    try:
        return _from_archive(ref)
    except (OSError, tarfile.TarError):
        return None


def _from_dir(root: str) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for here, dirs, names in os.walk(root):
        rel = os.path.relpath(here, root)
        if rel == "charts" or rel.startswith("charts" + os.sep):
            dirs[:] = []
            continue
        dirs[:] = [d for d in dirs if d not in (".git", ".svn", ".hg")]
        for name in names:
            path = os.path.normpath(os.path.join(rel, name)).replace(os.sep, "/")
            # Helm keeps a hidden file (its .helmignore) among the chart's files, but never templates/.*
            if (name.startswith(".") and path.startswith("templates/")) or (rel == "." and name.endswith(".tgz")):
                continue
            with open(os.path.join(here, name), encoding="utf-8", errors="replace") as handle:
                out[path] = handle.read()
    return out


def _from_archive(path: str) -> Dict[str, str]:
    out: Dict[str, str] = {}
    with tarfile.open(path, "r:*") as archive:
        for member in archive.getmembers():
            parts = member.name.split("/", 1)
            if not member.isfile() or len(parts) < 2 or parts[1].startswith("charts/"):
                continue
            handle = archive.extractfile(member)
            if handle is not None:
                out[parts[1]] = handle.read().decode("utf-8", "replace")
    return out
