"""hacking/docsite_rst.py: the docsite's guides, written as RST from the
Markdown, and the check that the committed RST is what the Markdown gives."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "tooling" / "fixtures" / "docsite"
_spec = importlib.util.spec_from_file_location("docsite_rst", ROOT / "hacking" / "docsite_rst.py")
docsite_rst = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = docsite_rst  # dataclasses look their module up
_spec.loader.exec_module(docsite_rst)

GUIDES = (docsite_rst.Guide("case", "case.md"), docsite_rst.Guide("other", "other.md", title="Other, retitled"))
PLUGINS = (["phase"], ["crds"])


def test_the_committed_guides_are_what_the_markdown_gives() -> None:
    assert docsite_rst.stale() == [], "run make docs"


def test_every_guide_is_in_the_docsite_index_and_nothing_else() -> None:
    index = yaml.safe_load((ROOT / "docs" / "docsite" / "extra-docs.yml").read_text())
    listed = [ref for section in index["sections"] for ref in section["toctree"]]
    assert sorted(listed) == sorted(g.name for g in docsite_rst.GUIDES)
    assert sorted(p.stem for p in (ROOT / "docs" / "docsite" / "rst").glob("*.rst")) == sorted(listed)


def test_every_guide_of_docs_is_in_the_site() -> None:
    assert {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")} <= \
        {g.source for g in docsite_rst.GUIDES if g.section is None}


@pytest.mark.parametrize("name", ["case", "other"])
def test_markdown_renders_as_rst(name: str) -> None:
    """Headings with labels, links to pages, sections, files and URLs, module and role
    names linked, inline markup beside words, lists with code, tables."""
    rendered = docsite_rst.render_all(FIXTURES, GUIDES, PLUGINS)
    assert rendered[f"{name}.rst"] == (FIXTURES / f"{name}.rst").read_text()


def _tree(tmp_path: Path, markdown: str) -> Path:
    (tmp_path / "case.md").write_text(markdown)
    shutil.copy(FIXTURES / "other.md", tmp_path / "other.md")
    return tmp_path


@pytest.mark.parametrize("markdown, error", [
    ("# T\n\n<div>raw</div>\n", "html_block is not rendered"),
    ("# T\n\n> quoted\n", "blockquote is not rendered"),
    ("# T\n\n[x](#nowhere)\n", "no heading of case.md in the site has that anchor"),
    ("# T\n\n[x](other.md#nowhere)\n", "no heading of other.md in the site has that anchor"),
    ("# T\n\n[x](missing.txt)\n", "missing.txt does not exist"),
    ("# T\n\n[x](../../outside.md)\n", "leaves the repository"),
    ("text before any heading\n", "does not start with a heading"),
])
def test_what_it_cannot_render_is_an_error(tmp_path: Path, markdown: str, error: str) -> None:
    with pytest.raises(docsite_rst.Unsupported, match=error):
        docsite_rst.render_all(_tree(tmp_path, markdown), GUIDES, PLUGINS)


def test_a_section_of_a_file_is_a_page(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# Top\n\nintro\n\n## One\n\nfirst\n\n### Sub\n\n## Two\n\nsecond\n")
    page = docsite_rst.render_all(tmp_path, (docsite_rst.Guide("one", "README.md", "One"),), ([], []))["one.rst"]
    assert "first" in page and "Sub\n---" in page and "second" not in page and "intro" not in page
    with pytest.raises(docsite_rst.Unsupported, match="no section 'Three'"):
        docsite_rst.render_all(tmp_path, (docsite_rst.Guide("x", "README.md", "Three"),), ([], []))


def test_stale_names_changed_missing_and_extra_files(tmp_path: Path) -> None:
    root = _tree(tmp_path, (FIXTURES / "case.md").read_text())
    shutil.copytree(FIXTURES / "examples", root / "examples")
    rst = root / "docs" / "docsite" / "rst"
    rst.mkdir(parents=True)
    for name, text in docsite_rst.render_all(root, GUIDES, PLUGINS).items():
        (rst / name).write_text(text)
    assert docsite_rst.stale(root, GUIDES, PLUGINS) == []
    (root / "case.md").write_text((FIXTURES / "case.md").read_text().replace("A guide", "A changed guide"))
    (rst / "other.rst").unlink()
    (rst / "gone.rst").write_text("old\n")
    assert docsite_rst.stale(root, GUIDES, PLUGINS) == ["case.rst", "other.rst", "gone.rst"]


def test_slugs_are_githubs() -> None:
    assert docsite_rst.slug("Following a run: the lifecycle_summary callback") == \
        "following-a-run-the-lifecycle_summary-callback"
    assert docsite_rst.slug("bedlet: entrypoint gating and volumes") == "bedlet-entrypoint-gating-and-volumes"
