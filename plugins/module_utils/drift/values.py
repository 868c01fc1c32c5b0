# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which keys of the values asked for differ from the deployed revision's.

Helm keeps, in each revision, the values the user supplied (files, then the
mapping, merged as it merges them). A flow adds two keys of its own to them:
`lifecycle` (the version it deploys; the version comparison is the record's)
and the chart's `manifests.job_*` switches, all off (the phases run the
jobs). Those are left out on both sides; every other key is compared as Helm
stores it, so 1 and 1.0 compare alike, '' and null do not (a null drops the
chart's default, '' overrides it). Only the keys are named: values hold
passwords.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterator, List, Mapping, Sequence

from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import yaml
from ansible_collections.lcm.openstack.plugins.module_utils.helm.chart_jobs import JOB_PREFIX
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import merged_values

FLOW_OWNED = "lifecycle"
ADDED, REMOVED = " (added)", " (removed)"  # how a key changed_keys names was changed, when not in place


def asked_values(values_files: Sequence[str], values: Mapping[str, Any]) -> Dict[str, Any]:
    """The values asked for, merged as the release manager merges them (helm/cli.py)."""
    return merged_values(values_files, values)


def normalised(values: Any) -> Any:
    """Values as Helm stores them, as JSON: a YAML round-trip (1 and 1.0 alike), then
    every key a string and every date its text, as Go's YAML reader gives them (`1:` is "1")."""
    return json.loads(json.dumps(yaml.safe_load(yaml.safe_dump(values or {})) or {}, default=str))


def without_flow_keys(values: Mapping[str, Any]) -> Dict[str, Any]:
    out = {k: v for k, v in values.items() if k != FLOW_OWNED}
    manifests = out.get("manifests")
    if isinstance(manifests, Mapping):
        kept = {k: v for k, v in manifests.items() if not str(k).startswith(JOB_PREFIX)}
        if kept:
            out["manifests"] = kept
        else:
            out.pop("manifests")
    return out


def changed_keys(asked: Mapping[str, Any], deployed: Mapping[str, Any]) -> List[str]:
    """The dotted keys whose values differ (a list is one value), sorted."""
    before = without_flow_keys(normalised(deployed))
    after = without_flow_keys(normalised(asked))
    return sorted(_differing(before, after, ""))


def at_key(values: Mapping[str, Any], key: str) -> Any:
    """The value under a key changed_keys named (None where there is none)."""
    here: Any = values
    for part in key.split(" (")[0].split("."):
        here = here.get(part) if isinstance(here, Mapping) else None
    return here


def _leaves(value: Any, path: str, how: str) -> Iterator[str]:
    """Each key under a section added or removed whole, named as far down as it goes."""
    if isinstance(value, dict) and value:
        for key in value:
            yield from _leaves(value[key], f"{path}.{key}", how)
    else:
        yield path + how


def _differing(before: Any, after: Any, prefix: str) -> Iterator[str]:
    if isinstance(before, dict) and isinstance(after, dict):
        for key in set(before) | set(after):
            path = f"{prefix}.{key}" if prefix else str(key)
            if key not in before:
                yield from _leaves(after[key], path, ADDED)
            elif key not in after:
                yield from _leaves(before[key], path, REMOVED)
            else:
                yield from _differing(before[key], after[key], path)
    elif before != after:
        yield prefix or "(all)"
