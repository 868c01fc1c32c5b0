"""The Ansibles of .ci/versions are the ones everything else names: the
requirements files, meta/runtime.yml, the roles' metadata, the execution
environment, the docs; and the virtualenv the tests run in is one of them."""

from __future__ import annotations

import json
import re
import sys
from importlib import metadata
from pathlib import Path

import yaml
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from support import ansible_versions
from support.ansible_versions import newest, oldest, sanity_cores, series
from support.paths import ROOT


def pins(path: Path) -> dict:
    found = {}
    for line in path.read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)$", line.strip())
        if m:
            found[m.group(1).lower()] = m.group(2)
    return found


def test_the_file_is_plain_assignments_make_and_bash_both_read() -> None:
    values = ansible_versions.read()
    for key in ("PYTHON", "ANSIBLE", "CORE", "KUBERNETES_CORE"):
        assert f"NEWEST_{key}" in values and f"OLDEST_{key}" in values, key
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", values["CHECKED"]), values["CHECKED"]


def test_the_newest_is_newer_than_the_oldest() -> None:
    assert Version(newest().core) > Version(oldest().core)
    assert Version(newest().python) >= Version(oldest().python)
    assert Version(newest().ansible) > Version(oldest().ansible)


def test_sanity_covers_every_series_from_the_oldest_to_the_newest() -> None:
    minors = [Version(core).minor for core in sanity_cores()]
    assert [Version(core).major for core in sanity_cores()] == [2] * len(minors)
    assert minors == list(range(minors[0], minors[-1] + 1)), sanity_cores()


def test_requirements_dev_pins_the_newest() -> None:
    dev = pins(ROOT / "requirements-dev.txt")
    assert dev.get("ansible-core") == newest().core, dev
    assert dev.get("ansible") == newest().ansible, dev
    assert pins(ROOT / "requirements-docs.txt").get("ansible-core") == newest().core


def test_requires_ansible_is_the_oldest() -> None:
    runtime = yaml.safe_load((ROOT / "meta/runtime.yml").read_text())
    assert runtime["requires_ansible"] == f">={oldest().core}"


def test_every_role_asks_for_the_oldest_series() -> None:
    for meta in sorted(ROOT.glob("roles/*/meta/main.yml")):
        info = yaml.safe_load(meta.read_text())["galaxy_info"]
        assert str(info["min_ansible_version"]) == series(oldest().core), meta


def test_galaxy_yml_allows_both_kubernetes_cores() -> None:
    galaxy = yaml.safe_load((ROOT / "galaxy.yml").read_text())
    allowed = SpecifierSet(galaxy["dependencies"]["kubernetes.core"])
    for ansible in (newest(), oldest()):
        assert Version(ansible.kubernetes_core) in allowed, (ansible, allowed)


def test_the_execution_environment_is_built_on_the_newest() -> None:
    ee = yaml.safe_load((ROOT / "execution-environment.yml").read_text())
    assert ee["dependencies"]["ansible_core"]["package_pip"] == f"ansible-core=={newest().core}"
    m = re.search(r"python(3\.\d+)$", ee["dependencies"]["python_interpreter"]["python_path"])
    assert m and f"python-{m.group(1).replace('.', '')}:" in ee["images"]["base_image"]["name"], ee["images"]
    # ansible-core 2.20 and later run on Python 3.12 or newer, 2.19 on 3.11 to 3.13.
    assert Version(m.group(1)) >= Version("3.12"), m.group(1)


def test_the_docs_name_the_tested_versions_and_when() -> None:
    checked = ansible_versions.read()["CHECKED"]
    for doc in ("README.md", "docs/awx.md"):
        text = (ROOT / doc).read_text()
        for release in (newest().core, oldest().core, newest().ansible, checked):
            assert release in text, (doc, release)


def test_this_python_and_ansible_are_one_of_the_two() -> None:
    """The virtualenv the tests run in (.venv or .venv-oldest) holds what
    .ci/versions says, not what it held when it was made."""
    import ansible_collections.kubernetes.core as kc  # noqa: PLC0415 - where the running Ansible has it

    manifest = json.loads((Path(list(kc.__path__)[0]) / "MANIFEST.json").read_text())
    running = ansible_versions.Ansible(
        "%d.%d" % sys.version_info[:2], metadata.version("ansible"), metadata.version("ansible-core"),
        manifest["collection_info"]["version"])
    assert running in (newest(), oldest()), running
