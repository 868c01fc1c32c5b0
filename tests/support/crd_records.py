"""The collection's CRDs against their typed records (plugins/module_utils/crds/):
the records of tests/unit/fixtures/crds/, and checks that find where a
TypedDict and the CRD's OpenAPI schema, or a record and its TypedDict, part.
"""

from __future__ import annotations

import typing
from typing import Any, Dict, List

import yaml

from support.paths import ROOT

FIXTURES = ROOT / "tests" / "unit" / "fixtures" / "crds"
CRDS = ROOT / "roles" / "crds" / "files"


def cases(name: str) -> Dict[str, Dict[str, Any]]:
    """The records of fixtures/crds/<name>.yaml, by case."""
    with open(FIXTURES / f"{name}.yaml", encoding="utf-8") as f:
        return yaml.safe_load(f)


def schema(name: str) -> Dict[str, Any]:
    """The openAPIV3Schema of roles/crds/files/<name>.yaml (its one version)."""
    with open(CRDS / f"{name}.yaml", encoding="utf-8") as f:
        crd = yaml.safe_load(f)
    (version,) = crd["spec"]["versions"]
    return version["schema"]["openAPIV3Schema"]


def _record_type(hint: Any) -> Any:
    """The TypedDict a key holds, alone or as list items; None for a plain value."""
    if typing.get_origin(hint) in (list, List):
        hint = typing.get_args(hint)[0]
    return hint if typing.is_typeddict(hint) else None


def _is_list(hint: Any) -> bool:
    return typing.get_origin(hint) in (list, List)


def drift(record: Any, node: Dict[str, Any], path: str = "", top: bool = True) -> List[str]:
    """Where the TypedDict `record` and the schema `node` part: a key one has
    and the other lacks, a key required in one and not the other (a body's
    metadata, which the apiserver always returns, may be required by the type
    alone), a list against an object. An object the schema leaves open (no
    properties: metadata) is not looked into."""
    props = node.get("properties") or {}
    hints = typing.get_type_hints(record)
    out = [f"{path}.{k}: typed, not in the CRD" for k in hints if k not in props]
    out += [f"{path}.{k}: in the CRD, not typed" for k in props if k not in hints]
    required, typed_required = set(node.get("required") or []), set(record.__required_keys__)
    if top:
        typed_required.discard("metadata")
    if required != typed_required:
        out.append(f"{path}: the CRD requires {sorted(required)}, the type {sorted(typed_required)}")
    for key, hint in hints.items():
        sub = props.get(key)
        if sub is None:
            continue
        if _is_list(hint) != (sub.get("type") == "array"):
            out.append(f"{path}.{key}: a list in one, not in the other")
            continue
        inner = _record_type(hint)
        sub = (sub.get("items") or {}) if _is_list(hint) else sub
        if inner is not None and "properties" in sub:
            out += drift(inner, sub, f"{path}.{key}", top=False)
    return out


def unknown_keys(value: Any, record: Any, path: str = "") -> List[str]:
    """The keys of `value` (a record as the apiserver returns it) its
    TypedDict does not name, looked for in every nested record."""
    hints = typing.get_type_hints(record)
    out = []
    for key, item in value.items():
        if key not in hints:
            out.append(f"{path}.{key}")
            continue
        inner = _record_type(hints[key])
        if inner is None:
            continue
        for element in item if isinstance(item, list) else [item]:
            out += unknown_keys(element, inner, f"{path}.{key}")
    return out
