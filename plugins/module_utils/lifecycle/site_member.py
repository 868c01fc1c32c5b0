# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A ServiceLifecycle's place in a site: the site's name (a label, so the
UpdateStatus finds a site's services with one selector), the service's level,
the start of the site run that last touched it and the seconds its flow is
expected to take (annotations: the UpdateStatus's site progress and ETA,
updatestatus/site.py). playbooks/site.yml gives them at each flow's start."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import (
    ANNOTATION_SITE_EXPECTED, ANNOTATION_SITE_LEVEL, ANNOTATION_SITE_RUN, LABEL_SITE,
)
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import parse_time


@dataclass(frozen=True)
class SiteMember:
    name: str
    level: int = 0
    run: str = ""  # when the site run began
    expected_duration: int = 60

    @classmethod
    def given(cls, value: Optional[Mapping[str, Any]]) -> Optional["SiteMember"]:
        """From the module's `site` option; None when not given."""
        if not value:
            return None
        member = cls(str(value.get("name") or ""), int(value.get("level") or 0), str(value.get("run") or ""),
                     int(value.get("expected_duration") if value.get("expected_duration") is not None else 60))
        if not member.name:
            raise PhaseError("site.name is required: the site's name, e.g. site.name=example")
        if member.level < 0 or member.expected_duration < 0:
            raise PhaseError("site.level and site.expected_duration are 0 or more")
        if member.run and parse_time(member.run) is None:
            raise PhaseError(f"site.run {member.run!r} is not a timestamp such as 2026-01-31T12:00:00Z")
        return member

    def labels(self) -> Dict[str, str]:
        return {LABEL_SITE: self.name}

    def annotations(self) -> Dict[str, str]:
        out = {ANNOTATION_SITE_LEVEL: str(self.level), ANNOTATION_SITE_EXPECTED: str(self.expected_duration)}
        if self.run:
            out[ANNOTATION_SITE_RUN] = self.run
        return out


def site_metadata(record: Optional[Mapping[str, Any]]) -> Dict[str, Dict[str, str]]:
    """The site labels and annotations a record carries, to keep them on an
    apply that does not give them (an apply drops what it leaves out)."""
    meta = (record or {}).get("metadata") or {}
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k == LABEL_SITE}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items()
                   if k in (ANNOTATION_SITE_LEVEL, ANNOTATION_SITE_RUN, ANNOTATION_SITE_EXPECTED)}
    return {"labels": labels, "annotations": annotations}


def differs(record: Optional[Mapping[str, Any]], member: Optional[SiteMember]) -> bool:
    """Whether the record lacks what the member says (a member without a run
    keeps the run the record has: a service the run has nothing to do for)."""
    if member is None:
        return False
    have = site_metadata(record)
    return have["labels"] != member.labels() or any(
        have["annotations"].get(k) != v for k, v in member.annotations().items())
