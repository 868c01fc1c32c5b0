# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The flow playbooks' inputs, each checked and typed on its own.

The flows take plain variables (extra-vars, an AWX survey, a site's host
vars): text from a survey or the command line, or typed data from a vars
file. check(raw) reads each one it knows, refuses a malformed one with a
line that names the input, repeats the value given (never for values, which
may hold passwords), says what is expected and gives an example, and returns
the typed inputs. Every bad input is reported, one per line, not only the
first. A value left out, or given empty, takes the documented default; a
malformed one never does (to_revision=abc is not "the previous revision").
"""

from __future__ import annotations

import os
import re
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError
from ansible_collections.lcm.openstack.plugins.module_utils.drift import fields as drift_fields
from ansible_collections.lcm.openstack.plugins.module_utils.drift import model as drift_model

try:
    import yaml
except ImportError:  # pragma: no cover - ansible-test's import test; ansible-core itself needs PyYAML
    yaml = None

PHASE_TYPES = ("install", "upgrade", "rollback", "uninstall", "test")
SELECTIONS = ("templates", "stage", "annotation")
# `none`: the service takes no traffic (a node agent); the flows run no traffic step.
TRAFFIC_BACKENDS = ("service_selector", "ingress_canary", "openshift_route", "none")
NO_TRAFFIC = "none"
TRAFFIC_MODES = ("gate", "track")
_TRUE = ("true", "yes", "on", "1", "y")
_FALSE = ("false", "no", "off", "0", "n")
# A Kubernetes name that is a DNS label (RFC 1123): a service, release, namespace.
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
# A version becomes a label value (the pod track of the track mode).
_LABEL_VALUE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
# service_lifecycle's depends_on: name, name>=min, namespace/name>=min.
_DEPENDENCY = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?/)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(>=[A-Za-z0-9][-A-Za-z0-9_.+]*)?$")
# A database the backup may name: it becomes part of an archive's name, split on dots.
_DATABASE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$")


class Bad(InputError):
    """One input's value refused: what is expected (the input's name is added)."""


def _shown(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _absent(value: Any) -> bool:
    return value is None or (isinstance(value, (str, list, dict)) and not value)


def _text(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise Bad("text")
    return str(value).strip()


def _integer(minimum: int) -> Callable[[Any], int]:
    def parse(value: Any) -> int:
        # bool is an int in Python; yes/no given for a number is a mistake.
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise Bad(f"a whole number >= {minimum}")
        text = str(value).strip()
        if not re.fullmatch(r"[0-9]+", text) or int(text) < minimum:
            raise Bad(f"a whole number >= {minimum}")
        return int(text)
    return parse


def boolean(value: Any) -> bool:
    """true/false as YAML, a survey or the command line write it."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    raise Bad("true or false")


def _name(value: Any) -> str:
    text = _text(value) if not isinstance(value, int) else ""
    if not _DNS_LABEL.match(text) or len(text) > 53:
        raise Bad("a lower-case DNS name of at most 53 characters (letters, digits, '-')")
    return text


def _namespace(value: Any) -> str:
    text = _text(value) if not isinstance(value, int) else ""
    if not _DNS_LABEL.match(text) or len(text) > 63:
        raise Bad("a namespace name: lower-case letters, digits and '-', at most 63 characters")
    return text


def _version(value: Any) -> str:
    # A float is refused: YAML reads 2025.10 as 2025.1, a different version.
    if isinstance(value, float):
        raise Bad("a version as text (quote it in YAML: \"2025.10\", not 2025.10)")
    text = _text(value)
    if not _LABEL_VALUE.match(text) or len(text) > 63:
        raise Bad("a version: letters, digits, '.', '-', '_', at most 63 characters")
    return text


def _one_of(choices: Tuple[str, ...]) -> Callable[[Any], str]:
    def parse(value: Any) -> str:
        if not isinstance(value, str) or value.strip() not in choices:
            raise Bad("one of " + ", ".join(choices))
        return value.strip()
    return parse


def _yaml(value: Any) -> Any:
    """YAML text (a survey's textarea) as data; data as it is."""
    if not isinstance(value, str):
        return value
    try:
        return yaml.safe_load(value)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "not YAML"
        raise Bad(f"YAML text that parses: {problem}{where}") from None


def _values(value: Any) -> Dict[str, Any]:
    data = _yaml(value)
    if not isinstance(data, dict):
        raise Bad("a mapping of chart values, or YAML text of one")
    return data


def _paths(value: Any) -> List[str]:
    data = _yaml(value)
    if isinstance(data, str):
        data = [data]
    if not isinstance(data, list) or not all(isinstance(p, str) and p.strip() for p in data):
        raise Bad("a list of file paths, or YAML text of one")
    # Relative to where ansible-playbook runs; modules run elsewhere.
    return [os.path.realpath(p) for p in data]


def _chart(value: Any) -> str:
    text = _text(value)
    # A chart directory relative to where ansible-playbook runs is made
    # absolute: modules do not run in that directory.
    return os.path.realpath(text) if os.path.exists(text) else text


def _per_phase(check_value: Callable[[Any], bool], expected: str) -> Callable[[Any], Dict[str, Any]]:
    def parse(value: Any) -> Dict[str, Any]:
        data = _yaml(value)
        if not isinstance(data, dict):
            raise Bad(f"a mapping of phase type ({', '.join(PHASE_TYPES)}) to {expected}")
        unknown = sorted(str(k) for k in data if k not in PHASE_TYPES)
        if unknown:
            raise Bad(f"phase types among {', '.join(PHASE_TYPES)} (unknown: {', '.join(unknown)})")
        wrong = sorted(str(k) for k, v in data.items() if not check_value(v))
        if wrong:
            raise Bad(f"{expected} for {', '.join(wrong)}")
        return data
    return parse


def _commands(value: Any) -> Dict[str, Any]:
    """{project: {rolling: bool, check|expand|online|contract: [[argv...], ...]}}, whether given as
    a mapping or as YAML text. Each project's steps are checked where the update's plan reads them
    (common/openstack_upgrade.py, by lcm.openstack.flow_steps), before the flow starts."""
    data = _yaml(value)
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise Bad("a mapping of project to its steps (check, expand, online, contract: lists of commands) "
                  "and rolling")
    return data


def _dependencies(value: Any) -> Optional[List[str]]:
    data = _yaml(value)
    if isinstance(data, str):
        data = [data]
    if not isinstance(data, list) or not all(isinstance(d, str) and _DEPENDENCY.match(d) for d in data):
        raise Bad("a list of services: name, name>=version or namespace/name>=version")
    return data


def _databases(value: Any) -> List[str]:
    """Database names: a list, YAML text of one, or names separated by commas
    (-e backup_databases=nova,nova_cell0)."""
    data = _yaml(value)
    if isinstance(data, str):
        data = [d.strip() for d in data.split(",") if d.strip()]
    if not isinstance(data, list) or not all(isinstance(d, str) and _DATABASE.match(d) for d in data):
        raise Bad("a list of database names (letters, digits, '_' or '-'), or YAML text of one")
    return data


def _ignore_rules(value: Any) -> List[str]:
    """Fields a drift leaves out: a list (or YAML text of one) of path, Kind:path or Kind/name:path."""
    data = _yaml(value)
    if isinstance(data, str):
        data = [data]
    try:
        drift_fields.parse_rules(data if isinstance(data, list) else [data])
    except InputError:
        raise Bad("a list of field paths, each path, Kind:path or Kind/name:path (spec.replicas, "
                  "Deployment/keystone-api:spec.replicas)") from None
    return [str(d).strip() for d in data]


def _templates_ok(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(t, str) and t for t in value)


# name: (parse, default when absent, example). A default of Ellipsis: required.
INPUTS: Dict[str, Tuple[Callable[[Any], Any], Any, str]] = {
    "service": (_name, ..., "service=keystone"),
    "release": (_name, None, "release=keystone"),
    "openstack_namespace": (_namespace, "openstack", "openstack_namespace=openstack"),
    "chart": (_chart, "", "chart=/srv/charts/keystone"),
    "chart_version": (_text, "", "chart_version=0.3.29"),
    "values": (_values, {}, "values='{endpoints: {identity: {port: 5000}}}'"),
    "values_files": (_paths, [], "values_files='[/srv/values/keystone.yaml]'"),
    "version": (_version, "", "version=2025.1"),
    "phase_timeout": (_integer(1), 600, "phase_timeout=900"),
    "traffic_backend": (_one_of(TRAFFIC_BACKENDS), "service_selector", "traffic_backend=ingress_canary"),
    "traffic_target": (_text, "", "traffic_target=keystone-api"),
    "traffic_mode": (_one_of(TRAFFIC_MODES), "gate", "traffic_mode=track"),
    "backup_database": (boolean, True, "backup_database=false"),
    # Empty: every database the chart's render says the service has.
    "backup_databases": (_databases, [], "backup_databases='[nova, nova_cell0, nova_cell1]'"),
    "restore_database": (boolean, True, "restore_database=false"),
    "purge_database": (boolean, False, "purge_database=true"),
    "allow_missing_steps": (boolean, False, "allow_missing_steps=true"),
    "to_revision": (_integer(1), None, "to_revision=3"),
    "backup_ref": (_text, "", "backup_ref=keystone-upgrade-2025.2"),
    "depends_on": (_dependencies, None, "depends_on='[keystone, infra/mariadb>=10.6]'"),
    "dependency_timeout": (_integer(0), 0, "dependency_timeout=1800"),
    "phase_templates": (_per_phase(_templates_ok, "a list of templates"), {},
                        "phase_templates='{upgrade: [templates/job-db-sync.yaml]}'"),
    # Empty: rolling where the project supports rolling upgrades (common/openstack_upgrade.py), else drain.
    "update_strategy": (_one_of(("rolling", "drain")), "", "update_strategy=drain"),
    # Steps for a project the collection's table does not know, or over the table's.
    "upgrade_commands": (_commands, {}, "upgrade_commands='{mychart: {check: [[mychart-status, upgrade, check]]}}'"),
    "phase_selection": (_per_phase(lambda v: v in SELECTIONS, "one of " + ", ".join(SELECTIONS)), {},
                        "phase_selection='{upgrade: stage}'"),
    # What a drift of the release's objects does (drift/model.py): correct, report or ignore.
    "drift": (_one_of(drift_model.POLICIES), drift_model.DEFAULT_POLICY, "drift=correct"),
    "drift_ignore": (_ignore_rules, [], "drift_ignore='[Deployment:spec.replicas]'"),
}
# Inputs whose value is never repeated in a message: values may hold passwords.
SECRET = ("values",)


def read(raw: Mapping[str, Any]) -> Dict[str, Any]:
    """The inputs as given: openstack_namespace, or namespace as AWX surveys
    have set it (ansible-core warns that namespace is a reserved name)."""
    given = {name: raw[name] for name in INPUTS if name in raw}
    if _absent(given.get("openstack_namespace")) and not _absent(raw.get("namespace")):
        given["openstack_namespace"] = raw["namespace"]
    return given


def check(raw: Mapping[str, Any], needs_chart: bool = False, needs_version: bool = False,
          defaults: Optional[Mapping[str, Any]] = None) -> Tuple[Dict[str, Any], List[str]]:
    """(the typed inputs, one error line per bad input). raw as read() gives it."""
    required = {"service"} | ({"chart"} if needs_chart else set()) | ({"version"} if needs_version else set())
    chosen = dict(defaults or {})
    typed: Dict[str, Any] = {}
    errors: List[str] = []
    for name, (parse, default, example) in INPUTS.items():
        value = raw.get(name)
        if _absent(value):
            if name in required:
                errors.append(f"{name}: missing; it is required (for example -e {example})")
                continue
            if name not in chosen:
                typed[name] = None if default is ... else default
                continue
            value = chosen[name]
        try:
            typed[name] = parse(value)
        except Bad as exc:
            given = "" if name in SECRET else f"got {_shown(value)}, "
            errors.append(f"{name}: {given}expected {exc} (for example -e {example})")
    if "release" in typed and not typed["release"]:
        typed["release"] = typed.get("service")
    return typed, errors


def release_drift(typed: Mapping[str, Any]) -> str:
    """What a flow's Helm release reads of its objects' drift (helm_release's
    drift): `correct` reads it and applies the release again; `report` and
    `ignore` read nothing there, the report being the site plan's and the
    UpdateStatus's, so a flow pays for the read only where it acts on it."""
    return drift_model.CORRECT if typed.get("drift") == drift_model.CORRECT else drift_model.IGNORE


def traffic_skipped(typed: Mapping[str, Any]) -> str:
    """Why the flow takes no traffic step, '' when it takes them: the flows
    leave their traffic steps out on this value, and their start records
    each as skipped with it as the reason."""
    return f"traffic_backend {NO_TRAFFIC}" if typed.get("traffic_backend") == NO_TRAFFIC else ""
