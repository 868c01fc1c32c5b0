# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which rendered objects a phase owns, and in which order they run.

Three ways to choose them from a chart:

- ``stage``: the chart was rendered with a value naming the phase and gates
  its own templates on it, so everything rendered belongs to the phase;
- ``templates``: template paths (globs) inside the chart, by default the
  openstack-helm names of model.DEFAULT_TEMPLATES;
- ``annotation``: objects annotated ``lifecycle.openstack.org/phases`` with a
  list that names the phase type.

Whatever is chosen brings along the Secrets, ConfigMaps and ServiceAccounts
(with their Roles and RoleBindings) that its pods reference, because a Job of
an upgrade or a rollback needs its configuration and credentials re-created.

Objects run in waves: every object of a wave must be Current before the next
wave starts. Config objects come first. Where the chart declares an order
among the phase's objects (openstack-helm's kubernetes-entrypoint, see
phase/waves.py), the waves are its levels: a Job runs in the wave after
every Job of the phase it waits for, and the Jobs of one level run together,
as they do under Helm. Only when nothing is declared: the order of the
template list, then Helm's hook weight. ``lifecycle.openstack.org/wave``
overrides both, and orders within a level.
"""

from __future__ import annotations

import fnmatch
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.phase.waves import Graph
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError, PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import (
    ANNOTATION_PHASES, DEFAULT_TEMPLATES, GROUP, PHASE_ONLY_TEMPLATES,
)
from ansible_collections.lcm.openstack.plugins.module_utils.helm.hooks import EVENTS, TEST_EVENTS
from ansible_collections.lcm.openstack.plugins.module_utils.helm.hooks import events as hook_events
from ansible_collections.lcm.openstack.plugins.module_utils.helm.render import Rendered

MODES = ("stage", "templates", "annotation", "manifests")
ANNOTATION_WAVE = f"{GROUP}/wave"
CONFIG_KINDS = ("Secret", "ConfigMap", "ServiceAccount", "Role", "RoleBinding")
CONFIG_WAVE: Tuple[int, ...] = (-(10 ** 6),)
LAST_WAVE: Tuple[int, ...] = (10 ** 6,)
_POD_OWNERS = {"Job", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "CronJob"}
INSTALL_HOOK_EVENTS = EVENTS["install"]


def select(rendered: Sequence[Rendered], phase_type: str, mode: str,
           templates: Optional[Sequence[str]] = None, namespace: str = "") -> List[Rendered]:
    """The objects of one phase, each with its wave, sorted by wave.
    `namespace` is the one the chart is rendered for (the dependencies name
    Services as namespace:name); empty matches them by name."""
    if mode not in MODES:
        raise InputError(f"unknown selection {mode!r}; use one of {', '.join(MODES)}")
    if mode in ("stage", "manifests"):
        chosen = list(rendered)
        for r in chosen:
            r.wave = _explicit_wave(r) or (_hook_weight(r),)
    elif mode == "annotation":
        chosen = [r for r in rendered if phase_type in _annotated_phases(r)]
        for r in chosen:
            r.wave = _explicit_wave(r) or (_hook_weight(r),)
    else:
        chosen = _by_templates(rendered, phase_type, templates)
    chosen += _referenced(rendered, chosen)
    chosen = _unique(chosen)
    for r in chosen:
        if r.kind in CONFIG_KINDS:
            r.wave = _explicit_wave(r) or CONFIG_WAVE
    _declared_order(rendered, chosen, namespace)
    return sorted(chosen, key=lambda r: r.wave)


def _declared_order(rendered: Sequence[Rendered], chosen: List[Rendered], namespace: str) -> None:
    """When the chart declares any order among the chosen objects, the wave
    of each non-config object is its level (then its wave annotation, if any);
    the template list and hook weights no longer count."""
    levels = Graph(rendered, namespace).levels((r.kind, r.name) for r in chosen if r.kind not in CONFIG_KINDS)
    if not any(levels.values()):
        return  # nothing declared among them: template order and hook weights alone
    for r in chosen:
        if r.kind not in CONFIG_KINDS:
            r.wave = (levels.get((r.kind, r.name), 0),) + (_explicit_wave(r) or (0,))


def waves(objects: Sequence[Rendered]) -> List[List[Rendered]]:
    """Group sorted objects into consecutive waves."""
    out: List[List[Rendered]] = []
    for r in objects:
        if out and out[-1][0].wave == r.wave:
            out[-1].append(r)
        else:
            out.append([r])
    return out


def _by_templates(rendered: Sequence[Rendered], phase_type: str,
                  templates: Optional[Sequence[str]]) -> List[Rendered]:
    explicit = templates is not None
    patterns = [_normalise(t) for t in (templates if explicit else DEFAULT_TEMPLATES[phase_type])]
    others = [] if explicit else other_phases_templates(phase_type)
    chosen: List[Rendered] = []
    for index, pattern in enumerate(patterns):
        hits = [r for r in rendered if r.source and fnmatch.fnmatchcase(r.source, pattern)
                and not any(fnmatch.fnmatchcase(r.source, o) for o in others)]
        if explicit and not hits:
            known = sorted({r.source for r in rendered if r.source})
            raise PhaseError(
                f"template {pattern} is not in the rendered chart (source.templates); it renders: "
                f"{', '.join(known) or 'nothing'}. Check the name, or the manifests: switch that "
                "turns the template on")
        for r in hits:
            if r not in chosen:
                r.wave = _explicit_wave(r) or (index, _hook_weight(r))
                chosen.append(r)
    if phase_type == "install" and not explicit:
        # Every install hook of the chart, whatever template or switch renders it:
        # a release whose jobs the phases run is installed without the hooks that
        # are left (helm/hooks.py), so nothing of them is lost.
        for r in rendered:
            if r not in chosen and _install_hook(r) and not any(fnmatch.fnmatchcase(r.source, o) for o in others):
                r.wave = _explicit_wave(r) or (len(patterns), _hook_weight(r))
                chosen.append(r)
    return chosen


def _install_hook(r: Rendered) -> bool:
    found = set(hook_events(r.obj))
    return bool(found & INSTALL_HOOK_EVENTS) and not found & TEST_EVENTS


def other_phases_templates(phase_type: str) -> List[str]:
    """The templates only other phase types run: a default glob of this type
    (install's job-*) leaves them out. An explicit list is taken as it is."""
    return [t for other, globs in PHASE_ONLY_TEMPLATES.items() if other != phase_type for t in globs]


def _normalise(template: str) -> str:
    template = template.strip()
    if not template.startswith(("templates/", "charts/")):
        template = "templates/" + template
    if not template.endswith((".yaml", ".yml", ".tpl", "*")):
        template += ".yaml"
    return template


def _annotated_phases(r: Rendered) -> Set[str]:
    value = ((r.obj.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_PHASES, "")
    return {p.strip() for p in str(value).split(",") if p.strip()}


def _hook_weight(r: Rendered) -> int:
    value = ((r.obj.get("metadata") or {}).get("annotations") or {}).get("helm.sh/hook-weight", "0")
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _explicit_wave(r: Rendered) -> Optional[Tuple[int, ...]]:
    value = ((r.obj.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_WAVE)
    if value is None:
        return None
    try:
        return (int(value),)
    except (TypeError, ValueError) as exc:
        raise PhaseError(f"{r.key}: annotation {ANNOTATION_WAVE} must be an integer, not {value!r}") from exc


def _pod_spec(obj: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    kind = obj.get("kind")
    spec = obj.get("spec") or {}
    if kind == "Pod":
        return spec
    if kind == "CronJob":
        spec = ((spec.get("jobTemplate") or {}).get("spec") or {})
    if kind in _POD_OWNERS:
        return (spec.get("template") or {}).get("spec") or {}
    return None


def pod_references(obj: Dict[str, Any]) -> Set[Tuple[str, str]]:
    """(kind, name) of every Secret, ConfigMap and ServiceAccount a workload uses."""
    spec = _pod_spec(obj)
    if spec is None:
        return set()
    refs: Set[Tuple[str, str]] = set()
    refs.add(("ServiceAccount", spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"))
    for secret in spec.get("imagePullSecrets") or []:
        refs.add(("Secret", secret.get("name", "")))
    for vol in spec.get("volumes") or []:
        if "secret" in vol:
            refs.add(("Secret", vol["secret"].get("secretName", "")))
        if "configMap" in vol:
            refs.add(("ConfigMap", vol["configMap"].get("name", "")))
        for src in (vol.get("projected") or {}).get("sources") or []:
            if "secret" in src:
                refs.add(("Secret", src["secret"].get("name", "")))
            if "configMap" in src:
                refs.add(("ConfigMap", src["configMap"].get("name", "")))
    for container in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        for env in container.get("env") or []:
            ref = env.get("valueFrom") or {}
            if "secretKeyRef" in ref:
                refs.add(("Secret", ref["secretKeyRef"].get("name", "")))
            if "configMapKeyRef" in ref:
                refs.add(("ConfigMap", ref["configMapKeyRef"].get("name", "")))
        for env_from in container.get("envFrom") or []:
            if "secretRef" in env_from:
                refs.add(("Secret", env_from["secretRef"].get("name", "")))
            if "configMapRef" in env_from:
                refs.add(("ConfigMap", env_from["configMapRef"].get("name", "")))
    return {r for r in refs if r[1]}


def _referenced(rendered: Sequence[Rendered], chosen: Sequence[Rendered]) -> List[Rendered]:
    """Rendered config objects the chosen workloads use, and the RBAC of their accounts."""
    wanted: Set[Tuple[str, str]] = set()
    for r in chosen:
        wanted |= pod_references(r.obj)
    by_key = {(r.kind, r.name): r for r in rendered}
    extra = [by_key[k] for k in sorted(wanted) if k in by_key]
    accounts = {name for kind, name in wanted if kind == "ServiceAccount"}
    for r in rendered:
        if r.kind == "RoleBinding" and any(
                s.get("kind") == "ServiceAccount" and s.get("name") in accounts
                for s in r.obj.get("subjects") or []):
            extra.append(r)
            role = (r.obj.get("roleRef") or {})
            if role.get("kind") == "Role" and ("Role", role.get("name")) in by_key:
                extra.append(by_key[("Role", role["name"])])
    return extra


def _unique(items: Iterable[Rendered]) -> List[Rendered]:
    seen: Set[str] = set()
    out: List[Rendered] = []
    for r in items:
        if r.key not in seen:
            seen.add(r.key)
            out.append(r)
    return out
