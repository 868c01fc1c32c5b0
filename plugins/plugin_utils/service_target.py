# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The service a role acts on, read from its `<role>_target` mapping once,
with the defaults of its keys (filter lcm.openstack.service_target).

Every role takes the service as one mapping (service, release, namespace,
chart, chart_version), which a flow builds once (flow_target). A key left
out, or given empty, takes its default here, and nowhere else: the release
is the service's name, the namespace is openstack, the chart and its version
are empty. A role's argument spec documents the same defaults.
"""

from __future__ import annotations

from typing import Any, Mapping, TypedDict

DEFAULT_NAMESPACE = "openstack"
KEYS = ("service", "release", "namespace", "chart", "chart_version")


class ServiceTarget(TypedDict):
    """The target mapping with every key set."""

    service: str
    release: str
    namespace: str
    chart: str
    chart_version: str


class BadTarget(ValueError):
    """A target mapping no role can act on; the message names the input."""


def service_target(target: Any, name: str = "target") -> ServiceTarget:
    """`target` with the defaults of its keys filled in. `name` is the input
    the mapping came from (install_target...), for the error."""
    example = f"{name}: {{service: keystone, namespace: openstack}}"
    if not isinstance(target, Mapping):
        raise BadTarget(f"{name} must be a mapping of {', '.join(KEYS)} (for example {example}), "
                        f"not {type(target).__name__}")
    service = target.get("service")
    if not service:
        raise BadTarget(f"{name} names no service: {name}.service is required (for example {example})")
    return ServiceTarget(
        service=service,
        release=target.get("release") or service,
        namespace=target.get("namespace") or DEFAULT_NAMESPACE,
        chart=target.get("chart") or "",
        chart_version=target.get("chart_version") or "",
    )
