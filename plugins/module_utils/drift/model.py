# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What drifted in one release, and what the service's policy does about it.

Two differences are told apart, as Flux's helm-controller tells them:

- the release is not what is asked: the chart or the values given differ
  from the deployed revision's. That is a change asked for, planned as an
  update whatever the policy;
- the release's objects are not what it deployed: a field its manifest sets
  was changed in the cluster (a Deployment edited by hand), or an object is
  gone. That is drift; the service's `drift` policy says whether it is
  corrected (`correct`: the release re-applied by the update flow), only
  reported (`report`, the default), or not even read (`ignore`).

Values are never shown, only the keys and fields that differ: values and
Secrets hold passwords.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List

CORRECT, REPORT, IGNORE = "correct", "report", "ignore"
POLICIES = (CORRECT, REPORT, IGNORE)
DEFAULT_POLICY = REPORT
# The flow inputs (and host vars of a site's service) that set the policy.
POLICY_INPUT, IGNORE_INPUT = "drift", "drift_ignore"
# How many keys or fields a one-line reason names before it counts the rest.
SHOWN = 4


@dataclass(frozen=True)
class ObjectDrift:
    """One object of the release that is not as its manifest sets it."""

    kind: str
    name: str
    namespace: str = ""
    fields: List[str] = field(default_factory=list)  # paths, e.g. spec.replicas
    missing: bool = False  # the object is gone from the cluster
    # For a diff only, never returned: each field as it is, and as the manifest sets it.
    was: Dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    wanted: Dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def ref(self) -> str:
        return f"{self.kind}/{self.name}"

    def text(self) -> str:
        if self.missing:
            return f"{self.ref} is missing"
        return f"{self.ref} {shown(self.fields)}"

    def as_dict(self) -> Dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "namespace": self.namespace,
                "fields": list(self.fields), "missing": self.missing}


@dataclass
class ReleaseDrift:
    """How one deployed release differs (nothing in any list: it does not)."""

    values: List[str] = field(default_factory=list)  # dotted keys of the values that differ
    chart: List[str] = field(default_factory=list)  # what differs of the chart: its version, its files
    objects: List[ObjectDrift] = field(default_factory=list)
    policy: str = DEFAULT_POLICY
    unread: str = ""  # why the release could not be compared ('' when it was)
    # For a diff only, never returned: the differing values, deployed and asked.
    values_was: Dict[str, Any] = field(default_factory=dict, repr=False)
    values_wanted: Dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def asked(self) -> bool:
        """The chart or the values asked for are not the deployed revision's."""
        return bool(self.values or self.chart)

    @property
    def live(self) -> bool:
        return bool(self.objects)

    def asked_reason(self, version: str) -> str:
        parts = []
        if self.chart:
            parts.append(f"chart {shown(self.chart)}")
        if self.values:
            parts.append(f"values {shown(self.values)}")
        return " and ".join(parts) + f" changed; the release stays at version {version}"

    def live_reason(self) -> str:
        texts = [o.text() for o in self.objects]
        more = f" and {len(texts) - SHOWN} more object(s)" if len(texts) > SHOWN else ""
        return "drift: " + "; ".join(texts[:SHOWN]) + more

    def as_dict(self) -> Dict[str, Any]:
        return {"values": list(self.values), "chart": list(self.chart),
                "objects": [o.as_dict() for o in self.objects], "policy": self.policy, "unread": self.unread}


def shown(items: List[str]) -> str:
    """A few of `items`, and how many more."""
    head = ", ".join(items[:SHOWN])
    return head + (f" (and {len(items) - SHOWN} more)" if len(items) > SHOWN else "")
