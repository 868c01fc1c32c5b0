# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The jobs of an openstack-helm chart, read from the chart itself.

openstack-helm switches each of its job templates with a key under
`manifests` in the chart's default values (`manifests.job_db_sync`, ...).
The flows install the Helm release with every one of them off and let the
phases run the jobs; the list comes from the chart a release is made of,
never from a list kept here, so a chart's own jobs (keystone's
credential-setup, fernet-setup, domain-manage) are never left behind as Helm
hooks outside any phase.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import yaml
from ansible_collections.lcm.openstack.plugins.module_utils.helm.chart_files import ChartSource

JOB_PREFIX = "job_"


def job_switches(defaults: Optional[Mapping[str, Any]]) -> List[str]:
    """The `manifests.job_*` keys of a chart's default values, sorted."""
    manifests = (defaults or {}).get("manifests")
    if not isinstance(manifests, Mapping):
        return []
    return sorted(str(k) for k in manifests if str(k).startswith(JOB_PREFIX))


def jobs_off(switches: List[str]) -> Dict[str, Any]:
    """Values that switch every one of `switches` off (empty when there is none)."""
    return {"manifests": {k: False for k in switches}} if switches else {}


def chart_defaults(chart: ChartSource) -> Dict[str, Any]:
    """The chart's own values.yaml (`helm show values`, or the file of a chart on disk), as a mapping."""
    loaded = yaml.safe_load(chart.values_text() or "") or {}
    return loaded if isinstance(loaded, dict) else {}
