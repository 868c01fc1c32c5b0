# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A release's drift as Ansible's --diff shows it: before is what is there, after what a run makes it.

Only the keys and fields that differ are shown. A value under a key that
names a credential, and every field of a Secret, is masked; the rest goes
through the run's Redactor, which knows the credentials of the values given.
"""

from __future__ import annotations

from typing import Any, Dict

from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import yaml
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import MASK, Redactor
from ansible_collections.lcm.openstack.plugins.module_utils.drift.model import ReleaseDrift
from ansible_collections.lcm.openstack.plugins.module_utils.drift.values import ADDED, REMOVED


def release_diff(name: str, drift: ReleaseDrift, redactor: Redactor) -> Dict[str, str]:
    before: Dict[str, Any] = {}
    after: Dict[str, Any] = {}
    if drift.chart:
        before["chart"] = after["chart"] = list(drift.chart)
    if drift.values:
        # A key added has no before, a key removed no after.
        before["values"] = {_key(k): _masked(redactor, k, drift.values_was.get(k)) for k in drift.values
                            if not k.endswith(ADDED)}
        after["values"] = {_key(k): _masked(redactor, k, drift.values_wanted.get(k)) for k in drift.values
                           if not k.endswith(REMOVED)}
    for obj in drift.objects:
        secret = obj.kind == "Secret"
        before.setdefault("objects", {})[obj.ref] = "(missing)" if obj.missing else {
            p: MASK if secret else obj.was.get(p) for p in obj.fields}
        after.setdefault("objects", {})[obj.ref] = "(created again)" if obj.missing else {
            p: MASK if secret else obj.wanted.get(p) for p in obj.fields}
    return {"before_header": f"{name} (deployed)", "after_header": f"{name} (asked)",
            "before": redactor.redact(_yaml(before)), "after": redactor.redact(_yaml(after))}


def _key(key: str) -> str:
    return key.split(" (")[0]


def _masked(redactor: Redactor, key: str, value: Any) -> Any:
    last = key.split(" (")[0].rsplit(".", 1)[-1]
    if redactor.is_secret_key(last):
        return MASK
    return redactor.mask_values(value) if isinstance(value, (dict, list)) else value


def _yaml(data: Dict[str, Any]) -> str:
    return yaml.safe_dump(data, default_flow_style=False, sort_keys=True) if data else ""
