"""tests/support/galaxy_import.py: what makes galaxy-importer's import of
the tarball unclean (the importer itself exits 0 on warnings)."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any, Dict

import pytest
import yaml

from support import galaxy_import
from support.paths import ROOT

CASE = yaml.safe_load((Path(__file__).parent / "fixtures/galaxy_import.yaml").read_text())


def problems(log: str = CASE["clean_log"], result: Dict[str, Any] = CASE["result"]) -> list:
    return galaxy_import.problems(log, result, CASE["roles"], CASE["ignores"])


def test_a_clean_import_has_no_problem() -> None:
    assert problems() == []
    assert galaxy_import.summary(CASE["result"]) == \
        "lcm.openstack " + "9.8.7: 1 doc_fragments, 1 filter, 1 module, 1 module_utils, 1 playbook, 2 role"


@pytest.mark.parametrize("line", [
    "WARNING: roles/crds/tasks/main.yml:10:3: syntax-check[unknown-module]: couldn't resolve module/action",
    "ERROR: Error running ansible-doc: cmd=...",
    "WARNING: Ignore files skip ansible-test sanity tests, found ignore-2.19.txt with 28 statement(s)",
    "WARNING: Ignore files skip ansible-test sanity tests, found ignore-2.20.txt with 27 statement(s)",
])
def test_every_warning_or_error_is_a_problem_but_the_committed_ignore_file(line: str) -> None:
    assert problems(CASE["clean_log"] + line + "\n") == [line]


def test_a_plugin_without_documentation_is_a_problem() -> None:
    result = copy.deepcopy(CASE["result"])
    result["docs_blob"]["contents"][1]["doc_strings"] = None
    assert problems(result=result) == ["filter site_summary: no documentation"]


@pytest.mark.parametrize("module", ["phase", "nothere"])
def test_an_action_plugin_is_documented_by_the_module_of_its_name(module: str) -> None:
    result = copy.deepcopy(CASE["result"])
    documented = [i for i in result["docs_blob"]["contents"] if i["content_type"] == "module"][0]
    result["docs_blob"]["contents"].append({"content_type": "action", "content_name": module, "doc_strings": None})
    expected = [] if module == documented["content_name"] else [f"action {module}: no documentation"]
    assert problems(result=result) == expected


def test_a_role_without_a_readme_or_not_found_is_a_problem() -> None:
    result = copy.deepcopy(CASE["result"])
    result["docs_blob"]["contents"][5]["readme_html"] = ""
    del result["docs_blob"]["contents"][6]
    assert problems(result=result) == ["role crds: no README", "role install: not found by the importer"]


def test_a_collection_without_a_readme_is_a_problem() -> None:
    result = copy.deepcopy(CASE["result"])
    result["docs_blob"]["collection_readme"] = None
    assert problems(result=result) == ["collection: no README"]


def test_the_expected_ignore_files_are_the_committed_ones() -> None:
    committed = {p.name: p for p in (ROOT / "tests/sanity").glob("ignore-*.txt")}
    assert committed
    assert galaxy_import.expected_ignores() == {n: len(p.read_text().splitlines()) for n, p in committed.items()}


def test_the_importer_is_pinned_and_runs_offline() -> None:
    reqs = (ROOT / "tests/publish/requirements.txt").read_text()
    assert re.search(r"^galaxy-importer==\d+\.\d+\.\d+$", reqs, re.M), reqs
    config = (ROOT / "tests/publish/galaxy-importer.cfg").read_text()
    assert re.search(r"^run_ansible_test = False$", config, re.M)
    assert re.search(r"^offline_ansible_lint = True$", config, re.M)
