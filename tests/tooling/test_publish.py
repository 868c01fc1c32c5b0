"""What a published collection is read by besides ansible-galaxy: AWX's
project sync (collections/requirements.yml) and the version, written in
galaxy.yml alone."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import List

import pytest
import yaml
from packaging.version import Version

from support.paths import ROOT

GALAXY = yaml.safe_load((ROOT / "galaxy.yml").read_text())
VERSION = GALAXY["version"]
# The collection, its tarball or its image, followed by a version.
_NAMED_VERSION = re.compile(r"lcm[-.]openstack(?:-ee)?(?:[-: ]|\.tar\.gz.*?)v?(\d+\.\d+\.\d+)")


def tracked() -> List[Path]:
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True, check=True)
    return [ROOT / name for name in out.stdout.splitlines() if (ROOT / name).is_file()]


def test_project_sync_installs_the_dependencies_of_galaxy_yml() -> None:
    reqs = yaml.safe_load((ROOT / "collections/requirements.yml").read_text())["collections"]
    asked = {r["name"]: r.get("version", "*") for r in reqs}
    assert asked == GALAXY["dependencies"], (asked, GALAXY["dependencies"])


def test_the_execution_environment_asks_for_the_same_range() -> None:
    reqs = yaml.safe_load((ROOT / "ee-requirements.yml").read_text())["collections"]
    asked = {r["name"]: r.get("version", "*") for r in reqs if r.get("type") != "file"}
    assert asked == GALAXY["dependencies"], (asked, GALAXY["dependencies"])


def test_the_project_files_stay_out_of_the_tarball() -> None:
    assert "collections" in GALAXY["build_ignore"]


def _lines_naming_a_version(suffix: str, text: str) -> List[tuple]:
    """(line number, line) of each line of a file that names the collection's
    version. Output captured from a run (```text in the Markdown, and the
    `.. code-block:: text` the docsite's RST writes from it) records the
    version of that run; commands and files must not."""
    found = []
    captured = False
    block_indent = -1  # the indentation of the RST text block the line is in, if any
    for number, line in enumerate(text.splitlines(), start=1):
        if suffix == ".md" and line.lstrip().startswith("```"):
            captured = line.strip() == "```text"
            continue
        if suffix == ".rst":
            indent = len(line) - len(line.lstrip())
            if block_indent >= 0 and line.strip() and indent <= block_indent:
                block_indent = -1
            if line.strip() == ".. code-block:: text":
                block_indent = indent
            captured = block_indent >= 0
        if not captured and _NAMED_VERSION.search(line):
            found.append((number, line))
    return found


def test_no_file_but_galaxy_yml_names_the_collection_s_version() -> None:
    found = []
    for path in tracked():
        if path.name == "galaxy.yml" or path.suffix in (".tgz", ".gz", ".png"):
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        found += [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
                  for number, line in _lines_naming_a_version(path.suffix, text)]
    assert not found, "the version belongs in galaxy.yml only:\n" + "\n".join(found)


def test_captured_output_may_name_the_version_and_nothing_else_may() -> None:
    named = "lcm.openstack " + "9.8.7"   # put together here, so that this file does not name a version itself
    markdown = f"# T\n\n```text\n{named}\n```\n\n```console\n{named}\n```\n\n{named}\n"
    assert [n for n, _line in _lines_naming_a_version(".md", markdown)] == [8, 11]
    rst = (f"- item\n\n  .. code-block:: text\n\n      {named}\n\n      more\n\n  {named}\n\n"
           f".. code-block:: console\n\n    {named}\n\n{named}\n")
    assert [n for n, _line in _lines_naming_a_version(".rst", rst)] == [9, 13, 15]
    assert [n for n, _line in _lines_naming_a_version(".txt", markdown)] == [4, 8, 11]


def test_the_version_pattern_finds_what_it_is_for() -> None:
    # Put together here, so that this file does not name a version itself.
    for name, version in (("-t lcm-openstack-ee:", "9.8.7"), ("name: /build/collections/lcm-openstack-", "9.8.7.tar.gz"),
                          ("lcm.openstack ", "9.8.7")):
        assert _NAMED_VERSION.search(name + version), name + version
    assert not _NAMED_VERSION.search('assert done["chart"] == "keystone-0.1.0"')


def _plugin_versions() -> List[tuple]:
    out = []
    for path in sorted((ROOT / "plugins").rglob("*.py")):
        for m in re.finditer(r"^version_added: *['\"]?([0-9.]+)['\"]?$", path.read_text(), re.M):
            out.append((str(path.relative_to(ROOT)), m.group(1)))
    return out


@pytest.mark.parametrize("plugin,added", _plugin_versions())
def test_no_plugin_was_added_in_a_version_after_this_one(plugin: str, added: str) -> None:
    assert Version(added) <= Version(VERSION), f"{plugin}: version_added {added} is after galaxy.yml's {VERSION}"


def test_the_changelog_has_no_release_after_this_one() -> None:
    releases = yaml.safe_load((ROOT / "changelogs/changelog.yaml").read_text()).get("releases") or {}
    assert all(Version(str(v)) <= Version(VERSION) for v in releases), sorted(releases)
