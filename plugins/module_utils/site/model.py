# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A site's services as the inventory gives them, parsed and checked.

A site is the group `openstack_services`: one host a service, with
`service`, `namespace`, `release`, `version`, `depends_on` and
`expected_duration`. Everything wrong with it is said here, one line naming
the fix, before anything is read from the cluster: a plan made from a
broken inventory would order flows that cannot run, and the first to fail
would be a flow hours into the run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Sequence, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import SiteError
from ansible_collections.lcm.openstack.plugins.module_utils.common.versions import satisfies
from ansible_collections.lcm.openstack.plugins.module_utils.site.graph import find_cycle

ACTIONS = ("deploy", "remove")
SERVICE_KEYS = ("service", "namespace", "release", "version", "depends_on", "expected_duration")
DEFAULT_NAMESPACE = "openstack"
DEFAULT_DURATION = 60
Key = Tuple[str, str]  # (namespace, service)

_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9])?"
_DEPENDENCY = re.compile(rf"^(?:(?P<namespace>{_NAME})/)?(?P<service>{_NAME})(?:\s*>=\s*(?P<minimum>[A-Za-z0-9][A-Za-z0-9.+_-]*))?$")


@dataclass(frozen=True)
class Dependency:
    service: str
    namespace: str
    min_version: str = ""
    external: bool = False

    @property
    def key(self) -> Key:
        return (self.namespace, self.service)

    def text(self, seen_from: str) -> str:
        """As written in depends_on: the namespace only when it is another one than `seen_from`."""
        name = self.service if self.namespace == seen_from else f"{self.namespace}/{self.service}"
        return f"{name}>={self.min_version}" if self.min_version else name


@dataclass
class Service:
    service: str
    namespace: str = DEFAULT_NAMESPACE
    release: str = ""
    version: str = ""
    depends_on: List[Dependency] = field(default_factory=list)
    expected_duration: int = DEFAULT_DURATION
    # How an update moves it (flows/update.py): the chart names its project, the
    # inputs update_strategy and upgrade_commands choose and extend the table's.
    chart: str = ""
    update_strategy: str = ""
    upgrade_commands: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> Key:
        return (self.namespace, self.service)


@dataclass
class Site:
    """The services of one run, keyed by (namespace, service), in inventory order."""
    services: Dict[Key, Service]
    action: str = "deploy"

    def name(self, key: Key) -> str:
        """How the plan names a service: its name, or namespace/name when two
        namespaces of the site hold a service of that name."""
        same = [k for k in self.services if k[1] == key[1]]
        return key[1] if len(same) <= 1 else f"{key[0]}/{key[1]}"

    def edges(self) -> Dict[Key, List[Key]]:
        """Each service's dependencies inside the site (external ones are not edges)."""
        return {k: [d.key for d in s.depends_on if not d.external] for k, s in self.services.items()}

    @property
    def namespaces(self) -> List[str]:
        return sorted({k[0] for k in self.services})


def parse_dependency(text: Any, namespace: str) -> Dependency:
    """`name`, `name>=min_version` or `namespace/name>=min_version`; without a
    namespace the dependency is in the dependent's `namespace`."""
    found = _DEPENDENCY.match(text.strip()) if isinstance(text, str) else None
    if not found:
        raise SiteError(f"malformed dependency {text!r}: write name, name>=min_version or "
                        "namespace/name>=min_version")
    return Dependency(found.group("service"), found.group("namespace") or namespace, found.group("minimum") or "")


def parse_site(services: Sequence[Mapping[str, Any]], action: str = "deploy", external: bool = False) -> Site:
    """The site, checked whole (see the module docstring). With `external`, a
    dependency on a service that is not in `services` is deployed by another
    run of the same site (another AWX job slice) and is marked external."""
    if action not in ACTIONS:
        raise SiteError(f"action must be one of {', '.join(ACTIONS)}, not {action!r}")
    site = Site({}, action)
    for index, raw in enumerate(services or []):
        service = _service(raw, index, needs_version=action == "deploy")
        if service.key in site.services:
            raise SiteError(f"service {service.service} is listed twice in namespace {service.namespace}: "
                            "give each host of group openstack_services its own service or namespace")
        site.services[service.key] = service
    _mark_external(site, external)
    _check_cycles(site)
    if action == "deploy":
        _check_minimums(site)
    return site


def _service(raw: Any, index: int, needs_version: bool) -> Service:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("service"), str) or not raw["service"].strip():
        raise SiteError(f"services[{index}] has no service name: give each entry a service "
                        "(the host's service var, or its inventory hostname)")
    name = raw["service"].strip()
    namespace = _text(raw.get("namespace"), name, "namespace") or DEFAULT_NAMESPACE
    depends = raw.get("depends_on") or []
    if not isinstance(depends, list):
        raise SiteError(f"{name}: depends_on must be a list of dependencies, not {depends!r}")
    service = Service(name, namespace, _text(raw.get("release"), name, "release") or name,
                      _version(raw.get("version"), name), [parse_dependency(d, namespace) for d in depends],
                      _duration(raw.get("expected_duration"), name), _text(raw.get("chart"), name, "chart"),
                      _text(raw.get("update_strategy"), name, "update_strategy"),
                      _mapping(raw.get("upgrade_commands"), name, "upgrade_commands"))
    if needs_version and not service.version:
        raise SiteError(f"{name} has no version: set the host var version (the version it deploys, e.g. 2025.1)")
    _check_own_dependencies(service)
    return service


def _mapping(value: Any, service: str, what: str) -> Mapping[str, Any]:
    if value is not None and not isinstance(value, Mapping):
        raise SiteError(f"{service}: {what} must be a mapping, not {value!r}")
    return value or {}


def _text(value: Any, service: str, what: str) -> str:
    if value is not None and not isinstance(value, str):
        raise SiteError(f"{service}: {what} must be a string, not {value!r}")
    return (value or "").strip()


def _version(value: Any, service: str) -> str:
    """A version as text. A YAML number is refused: unquoted, 2025.10 reads as 2025.1."""
    if isinstance(value, float):
        raise SiteError(f"{service}: version {value} is a number: quote it (version: \"{value}\"); "
                        "unquoted, 2025.10 reads as 2025.1")
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return _text(value, service, "version")


def _duration(value: Any, service: str) -> int:
    if value is None or value == "":
        return DEFAULT_DURATION
    try:
        seconds = int(str(value).strip())
    except ValueError:
        seconds = -1
    if isinstance(value, (bool, float)) or seconds < 0:
        raise SiteError(f"{service}: expected_duration must be a whole number of seconds, not {value!r}")
    return seconds


def _check_own_dependencies(service: Service) -> None:
    seen: List[Key] = []
    for dep in service.depends_on:
        if dep.key == service.key:
            raise SiteError(f"{service.service} depends on itself: remove {dep.text(service.namespace)} "
                            "from its depends_on")
        if dep.key in seen:
            raise SiteError(f"{service.service} lists {dep.service} twice in depends_on: keep one")
        seen.append(dep.key)


def _mark_external(site: Site, external: bool) -> None:
    """A dependency outside the site: external when allowed, else the error."""
    for service in site.services.values():
        for i, dep in enumerate(service.depends_on):
            if dep.key in site.services:
                continue
            if not external:
                raise SiteError(f"{service.service} depends on {dep.text(service.namespace)}, which is not in "
                                "the site: add it to group openstack_services or remove it from depends_on "
                                "(external: true if another run of the site deploys it)")
            service.depends_on[i] = Dependency(dep.service, dep.namespace, dep.min_version, external=True)


def _check_cycles(site: Site) -> None:
    cycle = find_cycle(site.edges())
    if cycle:
        chain = " -> ".join(site.name(k) for k in cycle)
        raise SiteError(f"the dependencies form a cycle, {chain} (each depends on the next): "
                        "remove one of these from depends_on")


def _check_minimums(site: Site) -> None:
    for service in site.services.values():
        for dep in service.depends_on:
            if dep.external or not dep.min_version:
                continue
            deployed = site.services[dep.key].version
            if not satisfies(deployed, dep.min_version):
                raise SiteError(f"{service.service} needs {dep.text(service.namespace)}, the site deploys "
                                f"{dep.service} {deployed}: raise {dep.service}'s version or lower the minimum")


def planned_keys(raw: Any) -> Any:
    """An entry of `services` with only the keys the plan reads: the others
    (values above all, which hold passwords) are not echoed back by Ansible."""
    return {k: v for k, v in raw.items() if k in SERVICE_KEYS} if isinstance(raw, Mapping) else raw
