"""The Ansibles the tests run on, as .ci/versions names them (the file the
Makefile includes and .ci/run reads)."""

from __future__ import annotations

import re
from typing import Dict, List, NamedTuple

from support.paths import ROOT

FILE = ROOT / ".ci" / "versions"
_LINE = re.compile(r"^(?P<name>[A-Z_]+)=(?P<value>[^\s\"']+)$")


class Ansible(NamedTuple):
    """One Ansible of the two: its Python, `ansible` package, ansible-core
    and the kubernetes.core that package ships."""

    python: str
    ansible: str
    core: str
    kubernetes_core: str


def read() -> Dict[str, str]:
    """NAME -> value of every assignment; anything else but a comment or a
    blank line is an error (make and bash must read the same thing)."""
    values: Dict[str, str] = {}
    for number, line in enumerate(FILE.read_text().splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        m = _LINE.match(line)
        if not m:
            raise ValueError(f"{FILE}:{number}: not NAME=value: {line!r}")
        values[m["name"]] = m["value"]
    return values


def _ansible(values: Dict[str, str], which: str) -> Ansible:
    return Ansible(*(values[f"{which}_{key}"] for key in ("PYTHON", "ANSIBLE", "CORE", "KUBERNETES_CORE")))


def newest() -> Ansible:
    return _ansible(read(), "NEWEST")


def oldest() -> Ansible:
    return _ansible(read(), "OLDEST")


def series(release: str) -> str:
    """`2.21.5` -> `2.21`."""
    return ".".join(release.split(".")[:2])


def sanity_cores() -> List[str]:
    """The ansible-core release sanity runs per series, oldest first."""
    values = read()
    between = [c for c in values.get("BETWEEN_CORES", "").split(",") if c]
    return [values["OLDEST_CORE"], *between, values["NEWEST_CORE"]]


def sanity_series() -> List[str]:
    return [series(core) for core in sanity_cores()]
