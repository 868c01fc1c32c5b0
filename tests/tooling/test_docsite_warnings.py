"""hacking/docsite_warnings.py: the docsite's Sphinx warnings are errors,
less those an offline build gives (unreachable intersphinx inventories, and
the labels of other sites they would have given)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("docsite_warnings", ROOT / "hacking" / "docsite_warnings.py")
docsite_warnings = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(docsite_warnings)

OFFLINE = (ROOT / "tests" / "tooling" / "fixtures" / "docsite_warnings.log").read_text()
OWN = "/work/build/docs/rst/docsite/flows.rst:12: WARNING: undefined label: 'ansible_collections.lcm.openstack.docsite.nope' [ref.ref]"
OTHER = "/work/build/docs/rst/docsite/flows.rst:30: WARNING: Title underline too short."


def test_an_offline_build_has_no_real_warning() -> None:
    assert len(docsite_warnings.entries(OFFLINE)) == 4
    assert docsite_warnings.real(OFFLINE) == []


def test_any_other_warning_stays_beside_the_offline_ones() -> None:
    left = docsite_warnings.real(OFFLINE + OWN + "\n" + OTHER + "\n\nits context line\n")
    assert left == [[OWN], [OTHER, "", "its context line"]]


def test_labels_of_other_sites_stay_when_the_inventories_were_reached() -> None:
    line = "/w/phase_module.rst:3389: WARNING: undefined label: 'common_return_values' [ref.ref]"
    assert docsite_warnings.real(line + "\n") == [[line]]


def test_an_inventory_warning_with_another_issue_in_it_stays() -> None:
    text = ("WARNING: failed to reach any of the inventories with the following issues:\n"
            "intersphinx inventory 'https://x/objects.inv' not fetchable due to <class 'ConnectionError'>: no\n"
            "intersphinx inventory has moved: a -> b\n")
    assert docsite_warnings.real(text) == [text.splitlines()]


def test_main_fails_on_a_real_warning(tmp_path: Path, capsys) -> None:
    log = tmp_path / "warnings.log"
    log.write_text(OFFLINE)
    assert docsite_warnings.main([str(log)]) == 0
    log.write_text(OFFLINE + OTHER + "\n")
    assert docsite_warnings.main([str(log)]) == 1
    assert OTHER in capsys.readouterr().err
