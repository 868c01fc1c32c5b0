# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How each OpenStack project upgrades: its checks, its schema steps, and
whether it supports a rolling upgrade. The one table of these in the code.

Each command runs in a Job made from the chart's own db-sync Job (its image
at the new release, its config, secrets and mounts), with the command
replaced (phase/migration_jobs.py). The steps, in the order a rolling update
runs them:

- ``check``: the project's ``<project>-status upgrade check`` (the upgrade
  checkers every project has had since Stein): exit 0 ok, 1 a warning (shown
  and recorded, the update goes on), anything else a failure (the update is
  refused before anything changed).
- ``expand``: the additive schema changes, safe while the old release runs:
  keystone's ``db_sync --expand``, neutron's ``upgrade --expand``, glance's
  ``db expand`` then ``db migrate``. nova, placement and cinder add to their
  schemas only in ``db sync`` (their data moves online), so their sync is
  their expand.
- ``online``: online data migrations, once every service of the project
  runs the new release; exit 1 means it did some and has more to do, so the
  Job runs again, 0 done, anything else an error.
- ``contract``: the schema changes that need the old release gone:
  keystone's ``db_sync --contract``, neutron's ``upgrade --contract``,
  glance's ``db contract``.

``rolling`` is whether the project supports rolling upgrades (the old and
new releases side by side on one schema); the update flow's default strategy
is ``rolling`` for those and ``drain`` for the others (barbican). A chart the
table does not know (by its chart name) has no steps but what the flow input
``upgrade_commands`` gives it, and updates with ``drain``.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError

Command = Tuple[str, ...]
STEPS = ("check", "expand", "online", "contract")
# Exit codes read from each step's container; any other non-zero is a failure.
WARNING_EXIT_CODES = {"check": (1,)}
REPEAT_EXIT_CODES = {"online": (1,)}
# How many runs an online migration gets before it is taken as stuck.
ONLINE_ATTEMPTS = 10
INPUT = "upgrade_commands"
# How an update moves a service (flows/update.py runs them); AUTO: the input
# left out, rolling where the project supports it.
DRAIN, ROLLING, AUTO = "drain", "rolling", ""
STRATEGY_INPUT = "update_strategy"


@dataclass(frozen=True)
class Project:
    name: str
    rolling: bool = False
    check: Tuple[Command, ...] = ()
    expand: Tuple[Command, ...] = ()
    online: Tuple[Command, ...] = ()
    contract: Tuple[Command, ...] = ()
    notes: str = ""

    def commands(self, step: str) -> Tuple[Command, ...]:
        return tuple(getattr(self, step))


def _status(project: str) -> Tuple[Command, ...]:
    return ((f"{project}-status", "upgrade", "check"),)


PROJECTS: Dict[str, Project] = {p.name: p for p in (
    Project("keystone", rolling=True, check=_status("keystone"),
            expand=(("keystone-manage", "db_sync", "--expand"),),
            contract=(("keystone-manage", "db_sync", "--contract"),)),
    Project("glance", rolling=True, check=_status("glance"),
            expand=(("glance-manage", "db", "expand"), ("glance-manage", "db", "migrate")),
            contract=(("glance-manage", "db", "contract"),)),
    Project("placement", rolling=True, check=_status("placement"),
            expand=(("placement-manage", "db", "sync"),),
            online=(("placement-manage", "db", "online_data_migrations"),)),
    Project("nova", rolling=True, check=_status("nova"),
            expand=(("nova-manage", "api_db", "sync"), ("nova-manage", "db", "sync")),
            online=(("nova-manage", "db", "online_data_migrations"),)),
    Project("neutron", rolling=True, check=_status("neutron"),
            expand=(("neutron-db-manage", "upgrade", "--expand"),),
            contract=(("neutron-db-manage", "upgrade", "--contract"),)),
    Project("cinder", rolling=True, check=_status("cinder"),
            expand=(("cinder-manage", "db", "sync"),),
            online=(("cinder-manage", "db", "online_data_migrations"),)),
    Project("barbican", check=_status("barbican"),
            notes="barbican does not support rolling upgrades"),
    Project("heat", check=_status("heat"), notes="heat does not support rolling upgrades"),
)}


def project_of(chart: str) -> str:
    """The project a chart deploys, by the chart's name: a directory or .tgz
    path, repo/chart, or an oci:// reference (its last path element, version
    and archive suffix cut off)."""
    base = posixpath.basename(str(chart or "").rstrip("/"))
    base = base.split("@", 1)[0].split(":", 1)[0]
    if base.endswith(".tgz"):
        base = base[:-len(".tgz")]
        head, _sep, tail = base.rpartition("-")
        base = head if head and tail[:1].isdigit() else base
    return base


def project(chart: str, given: Optional[Mapping[str, Any]] = None) -> Project:
    """The table's row for a chart, with the flow input `upgrade_commands`
    over it: {project: {rolling: bool, check|expand|online|contract: [argv, ...]}}.
    A step given replaces the table's; an empty list turns it off."""
    name = project_of(chart)
    row = PROJECTS.get(name, Project(name, notes=f"no rolling upgrade is known for {name}"))
    mine = (given or {}).get(name)
    if mine is None:
        return row
    if not isinstance(mine, Mapping):
        raise InputError(f"{INPUT}.{name} must be a mapping of steps ({', '.join(STEPS)}) and rolling, "
                         f"not {type(mine).__name__}")
    unknown = sorted(set(mine) - set(STEPS) - {"rolling"})
    if unknown:
        raise InputError(f"{INPUT}.{name}: unknown key(s) {', '.join(map(str, unknown))}; "
                         f"use {', '.join(STEPS)} or rolling")
    changes: Dict[str, Any] = {s: _commands(name, s, mine[s]) for s in STEPS if s in mine}
    if "rolling" in mine:
        changes["rolling"] = bool(mine["rolling"])
    return replace(row, notes=f"{INPUT}.{name} given", **changes)


def _commands(name: str, step: str, value: Any) -> Tuple[Command, ...]:
    where = f"{INPUT}.{name}.{step}"
    if not isinstance(value, list) or not all(
            isinstance(c, list) and c and all(isinstance(a, str) and a for a in c) for c in value):
        raise InputError(f"{where} must be a list of commands, each a list of arguments "
                         f"(e.g. [[nova-manage, db, sync]]), not {value!r}")
    return tuple(tuple(c) for c in value)


@dataclass(frozen=True)
class JobSpec:
    """One Job of a step: its name suffix, its command and how its exit codes read."""

    step: str
    name: str
    command: Command
    warning_exit_codes: Tuple[int, ...] = ()
    repeat_exit_codes: Tuple[int, ...] = ()
    attempts: int = 1

    def as_option(self) -> Dict[str, Any]:
        return {"step": self.step, "name": self.name, "command": list(self.command),
                "warning_exit_codes": list(self.warning_exit_codes),
                "repeat_exit_codes": list(self.repeat_exit_codes), "attempts": self.attempts}


def jobs(row: Project, step: str) -> List[JobSpec]:
    """The Jobs of one step, one a command, in the order they run."""
    commands = row.commands(step)
    out = []
    for index, command in enumerate(commands):
        suffix = step if len(commands) == 1 else f"{step}-{index + 1}"
        out.append(JobSpec(step, suffix, command, WARNING_EXIT_CODES.get(step, ()), REPEAT_EXIT_CODES.get(step, ()),
                           ONLINE_ATTEMPTS if step in REPEAT_EXIT_CODES else 1))
    return out


@dataclass(frozen=True)
class Steps:
    """What the update of one project runs, step by step, as phase options."""

    project: str
    rolling: bool
    notes: str
    jobs: Dict[str, List[Dict[str, Any]]] = field(default_factory=dict)


def steps(chart: str, given: Optional[Mapping[str, Any]] = None) -> Steps:
    row = project(chart, given)
    return Steps(row.name, row.rolling, row.notes,
                 {s: [j.as_option() for j in jobs(row, s)] for s in STEPS})


def choose(asked: str, service: str, upgrade: Steps) -> Tuple[str, str]:
    """The strategy of an update of `service` (DRAIN or ROLLING) and why, from
    the input update_strategy (`asked`, AUTO when not given); ("", the
    refusal) when the service cannot be updated so."""
    if asked == DRAIN:
        return DRAIN, f"{STRATEGY_INPUT} drain asked"
    if asked == ROLLING and not upgrade.rolling:
        why = upgrade.notes or f"{upgrade.project} does not support rolling upgrades"
        return "", (f"update of {service} refused, nothing changed: {STRATEGY_INPUT} rolling, but {why}. "
                    f"Use {STRATEGY_INPUT}=drain, or {INPUT}.{upgrade.project}.rolling: true with its steps")
    if asked in (ROLLING, AUTO) and upgrade.rolling:
        if not upgrade.jobs.get("expand"):
            return "", (f"update of {service} refused, nothing changed: a rolling update expands the "
                        f"database first, and no expand command is known for {upgrade.project}. Give "
                        f"{INPUT}.{upgrade.project}.expand, or use {STRATEGY_INPUT}=drain")
        return ROLLING, (f"{STRATEGY_INPUT} rolling asked" if asked == ROLLING
                         else f"{upgrade.project} supports rolling upgrades")
    return DRAIN, upgrade.notes or f"{upgrade.project} does not support rolling upgrades"
