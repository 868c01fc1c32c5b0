# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helm's refusal to take an object that another release owns, said as its
cause and its fix.

Helm takes an object the chart renders only when it does not exist yet, or
when its `meta.helm.sh/release-name` and `release-namespace` annotations name
the release being installed. Otherwise it stops before changing anything, in
a line of validation errors about annotation keys (`Unable to continue with
install: CustomResourceDefinition "databases.mariadb.osh.openstack.org" in
namespace "" exists and cannot be imported into the current release: invalid
ownership metadata; annotation validation error: key
"meta.helm.sh/release-namespace" must equal "ns2": current value is "ns1"`).

The usual cause is a chart that renders a cluster-scoped object, installed a
second time in another namespace: the stock mariadb chart's CRDs. One release
owns such an object; the others must not render it. So the message names the
object, the release and namespace that own it, and the value that switches
off the template rendering it, read from the chart itself: the
`manifests.*` switch that template is gated on (openstack-helm's convention),
when the chart is on disk and has one; otherwise the template to switch off.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Optional, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.helm.chart_files import ChartSource, chart_file
from ansible_collections.lcm.openstack.plugins.module_utils.helm.chart_jobs import chart_defaults
from ansible_collections.lcm.openstack.plugins.module_utils.helm.process import HelmError
from ansible_collections.lcm.openstack.plugins.module_utils.helm.render import parse_manifest

TemplateOf = Callable[[str, str], Tuple[str, str]]  # (kind, name) -> (its template, the template's switch)

_CONFLICT = re.compile(r'(?P<kind>\w+) "(?P<name>[^"]+)" in namespace "(?P<namespace>[^"]*)" exists and cannot be '
                       r'imported into the current release: invalid ownership metadata; (?P<why>[^\n]*)')
_CURRENT = 'key "meta.helm.sh/release-{}" must equal "[^"]*": current value is "(?P<value>[^"]*)"'
_NOT_HELMS = 'missing key "meta.helm.sh/release-name"'
# An `if` action of a template, and a manifests.* value it reads.
_GATE = re.compile(r"\{\{-?\s*if\s+(?P<condition>(?:(?!\}\}).)*)\}\}", re.DOTALL)
_SWITCH = re.compile(r"\.Values\.(?P<path>manifests(?:\.\w+)+)")


@dataclass(frozen=True)
class Conflict:
    kind: str
    name: str
    namespace: str  # '' for a cluster-scoped object
    owner: str  # the release that owns it; '' when it is no Helm release's
    owner_namespace: str


def conflict(stderr: str, release: str, namespace: str) -> Optional[Conflict]:
    """The object Helm would not take from what it printed, and its owner;
    None when Helm failed for another reason. A key Helm did not complain
    about is the release's own (the same name in another namespace, say)."""
    found = _CONFLICT.search(stderr or "")
    if found is None:
        return None
    why = found.group("why")
    if _NOT_HELMS in why:
        return Conflict(found.group("kind"), found.group("name"), found.group("namespace"), "", "")
    owner = re.search(_CURRENT.format("name"), why)
    owner_namespace = re.search(_CURRENT.format("namespace"), why)
    return Conflict(found.group("kind"), found.group("name"), found.group("namespace"),
                    owner.group("value") if owner else release,
                    owner_namespace.group("value") if owner_namespace else namespace)


def switch(template: str, defaults: Mapping[str, Any]) -> str:
    """The `manifests.*` value that gates the template: the first `if` that
    reads one, alone or in an `and` (an `or` is not switched off by one
    value), which the chart's default values hold as a boolean. '' if none."""
    for gate in _GATE.finditer(template or ""):
        condition = gate.group("condition")
        path = _SWITCH.search(condition)
        if path is None:
            continue
        if re.search(r"\bor\b|\bnot\b", condition) or not isinstance(_lookup(defaults, path.group("path")), bool):
            return ""
        return path.group("path")
    return ""


def _lookup(values: Mapping[str, Any], dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(values, Mapping) or part not in values:
            return None
        values = values[part]
    return values


def explain(found: Conflict, release: str, namespace: str, template: str = "", gate: str = "") -> str:
    """One line: the object, who owns it, why this release cannot, and the fix."""
    what = f"{found.kind} {found.name}" + (f" in namespace {found.namespace}" if found.namespace else "")
    if found.owner:
        cause = f"{what} belongs to release {found.owner} in namespace {found.owner_namespace}"
    else:
        cause = f"{what} exists and belongs to no Helm release (it was made outside Helm)"
    why = ("it is cluster-scoped, one object for the whole cluster, and only one release can own it"
           if not found.namespace else "only one release can own an object")
    mine = f"release {release} in namespace {namespace}"
    if gate:
        fix = (f"set {gate} to false in the values of {mine} ({_nested(gate)}: it switches off {template}, "
               "which renders it) to use the one that is there")
    elif template:
        fix = f"switch off the template {template} in the values of {mine} to use the one that is there"
    else:
        fix = f"leave it out of {mine} (the chart value that switches off its template) to use the one that is there"
    if not found.owner:
        fix += (f", or hand it to {mine}: annotate it meta.helm.sh/release-name={release} and "
                f"meta.helm.sh/release-namespace={namespace} and label it app.kubernetes.io/managed-by=Helm")
    return f"{cause}: {why}. Fix: {fix}"


def _nested(dotted: str) -> str:
    """manifests.crds -> {manifests: {crds: false}}, as values takes it."""
    parts = dotted.split(".")
    return "{" + ": {".join(parts) + ": false" + "}" * len(parts)


def from_chart(rendered: str, chart: ChartSource) -> TemplateOf:
    """The template that renders an object, from the release's render, and
    its switch, from the chart's own files (asked only once Helm refused)."""
    def template_of(kind: str, name: str) -> Tuple[str, str]:
        source = next((r.source for r in parse_manifest(rendered) if (r.kind, r.name) == (kind, name)), "")
        text = chart_file(chart.ref, source) if source else None
        return source, (switch(text, chart_defaults(chart)) if text else "")
    return template_of


@contextlib.contextmanager
def explained(release: str, namespace: str, template_of: Optional[TemplateOf] = None) -> Iterator[None]:
    """Around a Helm command that installs objects: a refusal to take one
    that another release owns is said as its cause and fix, in place of
    Helm's words in the message (the details keep what Helm printed).
    `template_of(kind, name)` gives (the template that renders it, its switch)."""
    try:
        yield
    except HelmError as exc:
        stderr = str(exc.details.get("stderr") or "")
        found = conflict(stderr, release, namespace)
        if found is None:
            raise
        template, gate = template_of(found.kind, found.name) if template_of is not None else ("", "")
        said = explain(found, release, namespace, template, gate)
        helm_said = stderr.strip().removeprefix("Error: ")
        message = str(exc)
        exc.args = (message.replace(helm_said, said) if helm_said and helm_said in message else f"{message}: {said}",)
        raise
