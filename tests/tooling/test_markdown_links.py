"""Every relative link of the README, the guides and the roles' READMEs names
a file that exists, and every #anchor a heading of the file it names
(tests/support/markdown_links.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import markdown_links
from support.paths import ROOT


def test_the_project_s_markdown_is_found() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in markdown_links.markdown_files()}
    assert {"README.md", "docs/design.md", "roles/install/README.md"} <= names
    assert not any(n.startswith("tests/tooling/fixtures/") for n in names)


def test_every_link_of_the_project_s_markdown_resolves() -> None:
    assert markdown_links.broken(markdown_links.markdown_files()) == []


def _tree(tmp_path: Path, text: str) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text(
        "# A guide\n\n## Running a phase: `lcm.openstack.phase`\n\n## Twice\n\n## Twice\n\nnot a heading: #x\n")
    (tmp_path / "script.sh").write_text("true\n")
    (tmp_path / "README.md").write_text(text)
    return tmp_path


@pytest.mark.parametrize("link", [
    "docs/guide.md", "docs/guide.md#a-guide", "docs/guide.md#running-a-phase-lcmopenstackphase",
    "docs/guide.md#twice", "docs/guide.md#twice-1", "docs/", "script.sh", "script.sh#L1",
    "#top", "https://example.org/missing.md#nowhere", "mailto:ops@example.org",
])
def test_a_link_that_resolves_is_no_problem(tmp_path: Path, link: str) -> None:
    root = _tree(tmp_path, f"# Top\n\nsee [there]({link}).\n")
    assert markdown_links.broken([root / "README.md"], root) == []


@pytest.mark.parametrize("link, why", [
    ("docs/gone.md", "docs/gone.md does not exist"),
    ("docs/guide.md#nowhere", "no heading of docs/guide.md has that anchor"),
    ("docs/guide.md#twice-2", "no heading of docs/guide.md has that anchor"),
    ("#x", "no heading of README.md has that anchor"),
    ("../outside.md", "leaves the repository"),
])
def test_a_link_that_does_not_resolve_is_named_with_its_line(tmp_path: Path, link: str, why: str) -> None:
    root = _tree(tmp_path, f"# Top\n\nintro\n\nsee [there]({link}).\n")
    assert markdown_links.broken([root / "README.md"], root) == [f"README.md:5: link {link!r}: {why}"]


def test_a_link_inside_code_is_no_link(tmp_path: Path) -> None:
    root = _tree(tmp_path, "# Top\n\n`[x](gone.md)`\n\n```text\n[x](gone.md)\n```\n")
    assert markdown_links.broken([root / "README.md"], root) == []
