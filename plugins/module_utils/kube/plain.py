# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Responses as the parsed JSON they are.

kubernetes.dynamic wraps every response in a ResourceInstance, a recursive
attribute view built field by field, and to_dict() builds a dict back from
it field by field. The engine only ever calls to_dict() on what it gets, so
that round trip is pure cost: for a phase of 200 Jobs it was most of the
module's CPU (each Job read, applied twice, and the Phase's status written
some hundred times). Passing ``serializer=plain`` to a dynamic client call
(the client's own hook for this) returns the parsed JSON behind the same
to_dict(). Like ResourceInstance, a list's items get the list's apiVersion
and kind, which the apiserver leaves out.
"""

from __future__ import annotations

from typing import Any, Dict


class Plain:
    """What a dynamic client call returns with ``serializer=plain``."""

    __slots__ = ("data",)

    def __init__(self, data: Dict[str, Any]) -> None:
        self.data = data

    def to_dict(self) -> Dict[str, Any]:
        return self.data


def plain(client: Any, data: Dict[str, Any]) -> Plain:
    """The serializer: called by the dynamic client with itself and the parsed JSON."""
    del client  # the signature the client calls serializers with
    kind = str(data.get("kind") or "")
    if kind.endswith("List") and "items" in data:
        data["items"] = data.get("items") or []
        for item in data["items"]:
            item.setdefault("apiVersion", data.get("apiVersion"))
            item.setdefault("kind", kind[:-4])
    return Plain(data)
