# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's own kinds as typed records: the Phase (phase.py), the ServiceLifecycle
(service_lifecycle.py) and the UpdateStatus (update_status.py), their spec and status as the
apiserver holds them (camelCase keys), and the accessors that read a body's spec, status and flow.

Here is what the kinds share: the object metadata the code reads, and a
condition. The CRDs leave metadata to the apiserver (`metadata: {type: object}`);
only the fields the collection reads or writes are named.
"""

from __future__ import annotations

from typing import Dict, List, TypedDict


class OwnerReference(TypedDict, total=False):
    apiVersion: str
    kind: str
    name: str
    uid: str
    controller: bool
    blockOwnerDeletion: bool


class ObjectMeta(TypedDict, total=False):
    name: str
    namespace: str
    uid: str
    resourceVersion: str
    generation: int
    creationTimestamp: str
    deletionTimestamp: str
    labels: Dict[str, str]
    annotations: Dict[str, str]
    ownerReferences: List[OwnerReference]
    finalizers: List[str]


class _ConditionKeys(TypedDict):
    type: str
    status: str  # "True", "False" or "Unknown"
    lastTransitionTime: str


class Condition(_ConditionKeys, total=False):
    """One entry of status.conditions (a list map keyed by type)."""

    reason: str
    message: str
