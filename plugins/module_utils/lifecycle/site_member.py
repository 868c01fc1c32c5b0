# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A ServiceLifecycle's place in a site: the site's name (a label, so the
UpdateStatus finds a site's services with one selector), the service's level,
the start of the site run that last touched it and the seconds its flow is
expected to take (annotations: the UpdateStatus's site progress and ETA,
updatestatus/site.py). playbooks/site.yml gives them at each flow's start,
with what the service's pods wait for that a flow beside it creates (nova's
API Service for neutron's agents; site/order.py): the phases read it from the
record and wait for those objects rather than refuse them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.crds.service_lifecycle import ServiceLifecycle
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LifecycleError
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import (
    ANNOTATION_SITE_EXPECTED, ANNOTATION_SITE_LEVEL, ANNOTATION_SITE_PROVIDED, ANNOTATION_SITE_RUN, LABEL_SITE,
)
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import parse_time


@dataclass(frozen=True)
class SiteMember:
    name: str
    level: int = 0
    run: str = ""  # when the site run began
    expected_duration: int = 60
    provided: Tuple[Tuple[str, str, str, str], ...] = ()  # (kind, namespace, name, service)

    @classmethod
    def given(cls, value: Optional[Mapping[str, Any]]) -> Optional["SiteMember"]:
        """From the module's `site` option; None when not given."""
        if not value:
            return None
        member = cls(str(value.get("name") or ""), int(value.get("level") or 0), str(value.get("run") or ""),
                     int(value.get("expected_duration") if value.get("expected_duration") is not None else 60),
                     _provided(value.get("provided")))
        if not member.name:
            raise LifecycleError("site.name is required: the site's name, e.g. site.name=example")
        if member.level < 0 or member.expected_duration < 0:
            raise LifecycleError("site.level and site.expected_duration are 0 or more")
        if member.run and parse_time(member.run) is None:
            raise LifecycleError(f"site.run {member.run!r} is not a timestamp such as 2026-01-31T12:00:00Z")
        return member

    def labels(self) -> Dict[str, str]:
        return {LABEL_SITE: self.name}

    def annotations(self) -> Dict[str, str]:
        out = {ANNOTATION_SITE_LEVEL: str(self.level), ANNOTATION_SITE_EXPECTED: str(self.expected_duration)}
        if self.run:
            out[ANNOTATION_SITE_RUN] = self.run
        out[ANNOTATION_SITE_PROVIDED] = json.dumps(
            [dict(zip(("kind", "namespace", "name", "service"), p)) for p in self.provided], separators=(",", ":"))
        return out


def _provided(value: Any) -> Tuple[Tuple[str, str, str, str], ...]:
    if not value:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, Mapping) for v in value):
        raise LifecycleError("site.provided is a list of {kind, namespace, name, service} (site_plan's provided)")
    return tuple(sorted((str(v.get("kind") or ""), str(v.get("namespace") or ""), str(v.get("name") or ""),
                         str(v.get("service") or "")) for v in value))


def provided_by_site(record: Optional[ServiceLifecycle]) -> Dict[Tuple[str, str, str], str]:
    """(kind, namespace, name) -> the service whose flow, beside this one, creates it;
    read from the record's annotation (empty for a service outside a site run)."""
    text = (((record or {}).get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_SITE_PROVIDED) or ""
    try:
        items = json.loads(text) if text else []
    except ValueError:
        return {}
    return {(str(i.get("kind")), str(i.get("namespace")), str(i.get("name"))): str(i.get("service"))
            for i in items if isinstance(i, dict)}


def site_metadata(record: Optional[ServiceLifecycle]) -> Dict[str, Dict[str, str]]:
    """The site labels and annotations a record carries, to keep them on an
    apply that does not give them (an apply drops what it leaves out)."""
    meta = (record or {}).get("metadata") or {}
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k == LABEL_SITE}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items()
                   if k in (ANNOTATION_SITE_LEVEL, ANNOTATION_SITE_RUN, ANNOTATION_SITE_EXPECTED,
                            ANNOTATION_SITE_PROVIDED)}
    return {"labels": labels, "annotations": annotations}


def differs(record: Optional[ServiceLifecycle], member: Optional[SiteMember]) -> bool:
    """Whether the record lacks what the member says (a member without a run
    keeps the run the record has: a service the run has nothing to do for)."""
    if member is None:
        return False
    have = site_metadata(record)
    have["annotations"].setdefault(ANNOTATION_SITE_PROVIDED, "[]")  # a record from before it was written
    return have["labels"] != member.labels() or any(
        have["annotations"].get(k) != v for k, v in member.annotations().items())
