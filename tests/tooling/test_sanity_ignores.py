"""tests/sanity/ignore-<series>.txt, one per ansible-core series from the
oldest to the newest of .ci/versions, is committed and ships in the tarball,
so `ansible-test sanity` passes on the installed collection as a user runs it
under any of them.
It may skip only yamllint, only on Helm chart templates (Go template text
that renders YAML, which yamllint cannot read), and must name every such
template that ships: a chart template added or removed fails here."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List

import pytest

from support import ansible_versions, tarball
from support.paths import ROOT

SANITY = ROOT / "tests" / "sanity"
_TEMPLATE = re.compile(r"(?:^|/)charts/[^/]+/templates/[^/]+\.ya?ml$")
_LINE = re.compile(r"^(?P<path>\S+) (?P<code>\S+)  # (?P<why>\S.*)$")


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> List[str]:
    return tarball.files(tarball.build(tmp_path_factory.mktemp("dist")))


def ignore_files() -> Dict[str, Path]:
    return {p.name: p for p in sorted(SANITY.glob("ignore-*.txt"))}


# One ignore file per ansible-core series sanity runs on (.ci/versions, from
# the oldest to the newest): each is checked, and a series without one fails.
NAMES = [f"ignore-{series}.txt" for series in ansible_versions.sanity_series()]


def test_the_ignore_files_are_those_of_the_ansible_core_series_tested() -> None:
    assert sorted(ignore_files()) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_each_line_skips_yamllint_on_a_chart_template_and_says_why(name: str) -> None:
    assert name in ignore_files(), f"no tests/sanity/{name}"
    for number, line in enumerate(ignore_files()[name].read_text().splitlines(), start=1):
        m = _LINE.match(line)
        assert m, f"{name}:{number}: not `<path> <test>!<action>  # <why>`: {line!r}"
        assert m["code"] == "yamllint!skip", f"{name}:{number}: only yamllint may be skipped: {line!r}"
        assert _TEMPLATE.search(m["path"]), f"{name}:{number}: {m['path']} is not a chart template"
        chart = ROOT / m["path"].split("/templates/")[0]
        assert (chart / "Chart.yaml").is_file(), f"{name}:{number}: no Chart.yaml in {chart}"


@pytest.mark.parametrize("name", NAMES)
def test_the_ignore_file_names_exactly_the_chart_templates_that_ship(name: str, shipped: List[str]) -> None:
    assert name in ignore_files(), f"no tests/sanity/{name}"
    listed = [line.split(" ", 1)[0] for line in ignore_files()[name].read_text().splitlines()]
    assert listed == sorted(listed), f"{name} is not sorted"
    templates = [path for path in shipped if _TEMPLATE.search(path)]
    assert templates, "no chart template ships: the check would pass on anything"
    missing = sorted(set(templates) - set(listed))
    extra = sorted(set(listed) - set(templates))
    assert not missing and not extra, f"{name}: add {missing}, remove {extra}"


def test_the_ignore_files_ship(shipped: List[str]) -> None:
    for name in NAMES:
        assert f"tests/sanity/{name}" in shipped


def test_the_sanity_runner_adds_nothing_to_it() -> None:
    run = (SANITY / "run").read_text()
    assert "ignore-" not in re.sub(r"#.*", "", run), "tests/sanity/run writes an ignore file"
