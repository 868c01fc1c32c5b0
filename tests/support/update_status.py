"""Scenarios of cluster objects for the update status tests, and a check of a
status against the UpdateStatus CRD's schema.

A scenario is tests/unit/fixtures/update_status/<name>.yaml: `now`, `objects`
(as the API returns them, any kinds), `expect` (the insights it must yield),
and optionally `base`: another scenario whose objects it starts from; an
object of its own replaces the base's of the same kind, namespace and name;
and `drift`: the releases the keeper compared with their manifest, each
`namespace`, `release` and its drifted `objects` (updatestatus/drift_read.py).
"""

from __future__ import annotations

import copy
import re
from typing import Any, Dict, List, Tuple

import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.drift.model import ObjectDrift
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights import Settings, Snapshot
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import parse_time
from support.paths import ROOT

FIXTURES = ROOT / "tests" / "unit" / "fixtures" / "update_status"
CRD = ROOT / "roles" / "crds" / "files" / "updatestatus.yaml"
DATE_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")


def _key(obj: Dict[str, Any]) -> Tuple[str, str, str]:
    meta = obj.get("metadata") or {}
    return (obj.get("kind", ""), meta.get("namespace", ""), meta.get("name", ""))


def load(name: str) -> Dict[str, Any]:
    doc = yaml.safe_load((FIXTURES / f"{name}.yaml").read_text())
    if doc.get("base"):
        base = load(doc["base"])
        own = {_key(o) for o in doc.get("objects") or []}
        doc["objects"] = [o for o in base["objects"] if _key(o) not in own] + list(doc.get("objects") or [])
        doc.setdefault("now", base["now"])
    doc.setdefault("objects", [])
    return doc


def snapshot(name: str) -> Snapshot:
    doc = load(name)
    snap = Snapshot.from_objects(doc["objects"], parse_time(doc["now"]))
    if "drift" in doc:
        snap.drift = {(d["namespace"], d["release"]): [ObjectDrift(**o) for o in d.get("objects") or []]
                      for d in doc["drift"]}
    return snap


def scenarios() -> List[str]:
    return sorted(p.stem for p in FIXTURES.glob("*.yaml"))


def found_by(producer: Any, name: str) -> List[str]:
    """What `producer` alone finds in scenario `name`, as Kind/name of each
    insight's main resource, sorted; it must leave the snapshot as it was."""
    snap = snapshot(name)
    before = copy.deepcopy(snap)
    found = sorted(f"{i.resources[0]['kind']}/{i.resources[0]['name']}"
                   for i in producer.produce(snap, Settings()))
    assert snap == before, f"the {producer.NAME} producer modified the snapshot"
    return found


def expected_of(producer: Any, name: str) -> List[str]:
    """What scenario `name` expects of `producer`: none at all in a scenario
    made for another producer, which makes each a negative case for it."""
    return sorted(e["resource"] for e in load(name).get("expect") or [] if e["producer"] == producer.NAME)


def status_schema() -> Dict[str, Any]:
    crd = yaml.safe_load(CRD.read_text())
    (version,) = crd["spec"]["versions"]
    return version["schema"]["openAPIV3Schema"]["properties"]["status"]


def schema_errors(value: Any, schema: Dict[str, Any], path: str = "status") -> List[str]:
    """What the apiserver would refuse, or silently prune, in `value`: the
    subset of OpenAPI v3 the CRD uses (type, enum, required, properties,
    items, minimum, maximum, format date-time). Unknown fields are errors
    here: the apiserver would drop them without a word."""
    errors: List[str] = []
    kind = schema.get("type")
    types = {"object": dict, "array": list, "string": str, "integer": int, "boolean": bool}
    if kind in types and (not isinstance(value, types[kind]) or (kind == "integer" and isinstance(value, bool))):
        return [f"{path}: {value!r} is not of type {kind}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if schema.get("format") == "date-time" and not DATE_TIME.match(value):
        errors.append(f"{path}: {value!r} is not a date-time")
    if "minimum" in schema and value < schema["minimum"]:
        errors.append(f"{path}: {value} < {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        errors.append(f"{path}: {value} > {schema['maximum']}")
    if kind == "object":
        props = schema.get("properties") or {}
        errors += [f"{path}: {k} is required" for k in schema.get("required") or [] if k not in value]
        for key, item in value.items():
            if key not in props:
                errors.append(f"{path}.{key}: not in the schema (the apiserver would prune it)")
            else:
                errors += schema_errors(item, props[key], f"{path}.{key}")
    if kind == "array":
        for index, item in enumerate(value):
            errors += schema_errors(item, schema.get("items") or {}, f"{path}[{index}]")
    return errors


def uids(snap: Snapshot) -> Dict[str, str]:
    """name of each insight's main resource -> its uid, all producers together."""
    from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights import produce_all

    return {i.resources[0]["name"]: i.uid for i in produce_all(snap, Settings())}
