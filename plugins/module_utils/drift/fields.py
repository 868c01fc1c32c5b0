# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fields of an object that differ, and the fields a service ignores.

`set_by` compares an object as a manifest sets it with the object in the
cluster, for the fields the manifest sets only: what the apiserver,
controllers and other tools add (defaults, status, a restart annotation) is
not drift. It is strict: a list must match element by element, a number is
not its string, `100m` is not `0.1`; only an empty value ('', {}, [], null)
matches an absent one, as the apiserver drops those it omits when empty. What it finds is then confirmed by the
apiserver (drift/live.py), which knows the schema's defaults, units and
list merge keys; what it does not find is equal as written, so needs no
request.

`between` lists every field that differs between two whole objects (the
live one, and the same after a dry-run apply of the manifest), minus what
the server itself moves on every write.

An ignore rule is `path`, `Kind:path` or `Kind/name:path`, a path is dotted
(`spec.replicas`, `metadata.annotations`), and it covers the fields under it.
"""

from __future__ import annotations

import base64
from typing import Any, Iterator, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError

# What the server writes on its own, never drift.
_SERVER_META = ("managedFields", "resourceVersion", "generation", "uid", "creationTimestamp",
                "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds", "namespace", "name")
_COMPARED_META = ("labels", "annotations")


def desired_form(obj: Mapping[str, Any]) -> dict:
    """The manifest's object as the apiserver stores it where that is plain:
    a Secret's stringData becomes base64 data."""
    out = dict(obj)
    if out.get("kind") == "Secret" and out.get("stringData"):
        data = dict(out.get("data") or {})
        for key, value in (out.pop("stringData") or {}).items():
            data[key] = base64.b64encode(str(value).encode()).decode()
        out["data"] = data
    return out


def set_by(desired: Mapping[str, Any], live: Mapping[str, Any]) -> List[str]:
    """The paths the manifest's object sets that the live one does not have as set."""
    desired = desired_form(desired)
    out: List[str] = []
    for key, value in desired.items():
        if key in ("apiVersion", "kind", "status"):
            continue
        if key == "metadata":
            meta = live.get("metadata") or {}
            for part in _COMPARED_META:
                if (value or {}).get(part):
                    out += _subset((value or {})[part], meta.get(part), f"metadata.{part}")
            continue
        out += _subset(value, live.get(key), key)
    return out


def _subset(want: Any, have: Any, path: str) -> List[str]:
    if have is None and (want is None or want in ("", {}, [])):
        return []  # an empty value the apiserver leaves out (openstack-helm's `value: ""`)
    if isinstance(want, Mapping):
        if not isinstance(have, Mapping):
            return [path]
        return [p for k, v in want.items() for p in _subset(v, have.get(k), f"{path}.{k}")]
    if isinstance(want, list):
        if not isinstance(have, list) or len(want) != len(have):
            return [path]
        return [p for i, (w, h) in enumerate(zip(want, have)) for p in _subset(w, h, f"{path}[{i}]")]
    if type(want) is not type(have) and not (_number(want) and _number(have)):
        return [path]
    return [] if want == have else [path]


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def between(before: Mapping[str, Any], after: Mapping[str, Any]) -> List[str]:
    """Every path that differs between two whole objects (status and the server's own metadata left out)."""
    return sorted(set(_paths(_bare(before), _bare(after), "")))


def _bare(obj: Mapping[str, Any]) -> dict:
    out = {k: v for k, v in obj.items() if k != "status"}
    out["metadata"] = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _SERVER_META}
    return out


def _paths(a: Any, b: Any, prefix: str) -> Iterator[str]:
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for key in set(a) | set(b):
            yield from _paths(a.get(key), b.get(key), f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            yield from _paths(x, y, f"{prefix}[{i}]")
    elif a != b:
        yield prefix


Rule = Tuple[str, str, str]  # (kind, name, path); '' matches any


def parse_rules(given: Optional[Sequence[Any]], where: str = "drift_ignore") -> List[Rule]:
    """The ignore rules of `given`, each `path`, `Kind:path` or `Kind/name:path`."""
    rules: List[Rule] = []
    for i, text in enumerate(given or []):
        # A rule with no path (`Deployment:`) would match no field: refused, not silently kept.
        if not isinstance(text, str) or not text.rpartition(":")[2].strip() or text.count(":") > 1:
            raise InputError(f"{where}[{i}] must be a field path, Kind:path or Kind/name:path "
                             f"(spec.replicas, Deployment/keystone-api:spec.replicas), not {text!r}")
        target, _sep, path = text.strip().rpartition(":")
        kind, _slash, name = target.partition("/")
        rules.append((kind, name, path.strip()))
    return rules


def ignored(kind: str, name: str, path: str, rules: Sequence[Rule]) -> bool:
    for r_kind, r_name, r_path in rules:
        if (r_kind and r_kind != kind) or (r_name and r_name != name):
            continue
        if path == r_path or path.startswith(r_path + ".") or path.startswith(r_path + "["):
            return True
    return False


def at(obj: Any, path: str) -> Any:
    """The value at a dotted path (`a.b[0].c`) of `obj`; None where there is none.
    A key may hold dots itself, as labels and annotations do (`app.kubernetes.io/name`)."""
    found = _walk(obj, [part for part in path.replace("[", ".[").split(".") if part])
    return None if found is _ABSENT else found


_ABSENT = object()


def _walk(here: Any, parts: List[str]) -> Any:
    if not parts:
        return here
    head = parts[0]
    if head.startswith("[") and head.endswith("]"):
        index = int(head[1:-1])
        return _walk(here[index], parts[1:]) if isinstance(here, list) and index < len(here) else _ABSENT
    if not isinstance(here, Mapping):
        return _ABSENT
    for end in range(1, len(parts) + 1):
        key = ".".join(parts[:end])
        if key in here:
            found = _walk(here[key], parts[end:])
            if found is not _ABSENT:
                return found
    return _ABSENT
