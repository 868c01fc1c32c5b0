# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every release of a site compared at once: with what is asked, and with its objects.

One list of Helm's deployed records for the namespaces of the releases
(drift/records.py), then per release the chart and values asked for against
the deployed revision's (drift/chart.py, drift/values.py: no render, no Helm
process), then the live objects of the releases whose policy reads them,
one list a kind for all of them (drift/live.py). A release with nothing
deployed has nothing to drift from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Sequence, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError
from ansible_collections.lcm.openstack.plugins.module_utils.drift import chart as chart_drift
from ansible_collections.lcm.openstack.plugins.module_utils.drift import fields, live, records
from ansible_collections.lcm.openstack.plugins.module_utils.drift.model import (
    DEFAULT_POLICY, IGNORE, IGNORE_INPUT, POLICIES, POLICY_INPUT, ReleaseDrift,
)
from ansible_collections.lcm.openstack.plugins.module_utils.drift.values import asked_values, at_key, changed_keys
from ansible_collections.lcm.openstack.plugins.module_utils.helm.storage import SECRET

Key = Tuple[str, str]


@dataclass
class Asked:
    """What a service's flow would deploy, and its drift policy."""

    namespace: str
    release: str
    chart: str = ""
    chart_version: str = ""
    values: Mapping[str, Any] = field(default_factory=dict)
    values_files: Sequence[str] = ()
    policy: str = DEFAULT_POLICY
    ignore: List[fields.Rule] = field(default_factory=list)


def policy_of(value: Any, where: str) -> str:
    """A service's drift policy, checked; `where` names the input in the error."""
    policy = str(value or DEFAULT_POLICY)
    if policy not in POLICIES:
        raise InputError(f"{where}{POLICY_INPUT} must be one of {', '.join(POLICIES)}, not {value!r}")
    return policy


def asked_of(raw: Mapping[str, Any], namespace: str, release: str, service: str) -> Asked:
    """From a site entry, or a flow's inputs: the chart keys and the drift inputs."""
    files = raw.get("values_files") or []
    return Asked(namespace, release, str(raw.get("chart") or ""), str(raw.get("chart_version") or ""),
                 raw.get("values") or {}, [files] if isinstance(files, str) else [str(f) for f in files],
                 policy_of(raw.get(POLICY_INPUT), f"{service}: "),
                 fields.parse_rules(raw.get(IGNORE_INPUT), f"{service}: {IGNORE_INPUT}"))


def assess(dyn: Any, asks: Mapping[Any, Asked], of: str = SECRET) -> Dict[Any, ReleaseDrift]:
    """Each service's drift, by the key `asks` gives it."""
    deployed = records.deployed(dyn, [a.namespace for a in asks.values()], of)
    out: Dict[Any, ReleaseDrift] = {}
    compared: Dict[Any, live.Release] = {}
    for key, ask in asks.items():
        record = deployed.get((ask.namespace, ask.release))
        if record is None:
            out[key] = ReleaseDrift(policy=ask.policy, unread="no deployed revision")
            continue
        values = asked_values(ask.values_files, ask.values)
        keys = changed_keys(values, record["config"])
        out[key] = ReleaseDrift(
            values=keys, chart=chart_drift.changes(ask.chart, ask.chart_version, record["chart"]) if ask.chart else [],
            policy=ask.policy, values_was={k: at_key(record["config"], k) for k in keys},
            values_wanted={k: at_key(values, k) for k in keys})
        if ask.policy != IGNORE:
            compared[key] = live.Release(ask.namespace, record["manifest"], ask.ignore)
    if compared:
        objects, skipped = live.drifted(dyn, compared)
        for key, found in objects.items():
            out[key].objects = found
            out[key].unread = skipped.get(key, "")
    return out
