"""RFC 6902 JSON Patch as the apiserver applies it to a status, for the fakes:
add, replace, remove and test on object members and list indices (what the
status writer sends); a path that is not there, or a test that does not hold,
fails, as with a 422."""

from __future__ import annotations

import copy
from typing import Any, Dict, List


class PatchFailed(Exception):
    pass


def _parent(doc: Any, path: str) -> tuple:
    parts = [p.replace("~1", "/").replace("~0", "~") for p in path.lstrip("/").split("/")]
    node = doc
    for part in parts[:-1]:
        try:
            node = node[int(part)] if isinstance(node, list) else node[part]
        except (KeyError, IndexError, ValueError) as exc:
            raise PatchFailed(f"{path}: {part} is not there") from exc
    return node, parts[-1]


def apply(doc: Dict[str, Any], ops: List[Dict[str, Any]]) -> Dict[str, Any]:
    out = copy.deepcopy(doc)
    for op in ops:
        node, last = _parent(out, op["path"])
        if op["op"] == "test":
            held = node[int(last)] if isinstance(node, list) and last.isdigit() and int(last) < len(node) \
                else node.get(last) if isinstance(node, dict) else None
            if held != op["value"]:
                raise PatchFailed(f"{op['path']}: {held!r} is not {op['value']!r}")
            continue
        if isinstance(node, list):
            index = len(node) if last == "-" else int(last)
            if index > len(node) or (op["op"] != "add" and index >= len(node)):
                raise PatchFailed(f"{op['path']}: index {index} of {len(node)}")
            if op["op"] == "add":
                node.insert(index, copy.deepcopy(op["value"]))
            elif op["op"] == "replace":
                node[index] = copy.deepcopy(op["value"])
            else:
                del node[index]
        elif op["op"] == "add":
            node[last] = copy.deepcopy(op["value"])
        elif last not in node:
            raise PatchFailed(f"{op['path']}: not there")
        elif op["op"] == "replace":
            node[last] = copy.deepcopy(op["value"])
        else:
            del node[last]
    return out
