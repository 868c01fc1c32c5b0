# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guides of the collection's docsite, written from the Markdown.

The Markdown (README.md and docs/*.md) is the one source: GitHub shows it,
and antsibull-docs takes a collection's extra docs only as reStructuredText
in docs/docsite/rst/. This writes those files from it, and with --check
says which are out of date instead (the unit tests run that check).

markdown-it-py parses the Markdown (CommonMark with tables, the dialect the
files are written in); what is written here is only the rendering of its
syntax tree as RST. Markdown this renderer does not know is an error, not
a silent loss.

    python hacking/docsite_rst.py [--check]
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode

ROOT = Path(__file__).resolve().parents[1]
RST_DIR = ROOT / "docs" / "docsite" / "rst"
LABEL_PREFIX = "ansible_collections.lcm.openstack.docsite."
REPOSITORY = "https://github.com/lcm-openstack/lcm.openstack"
THIS = "hacking/docsite_rst.py"


@dataclass(frozen=True)
class Guide:
    """One page of the docsite: a Markdown file, or one section of it."""

    name: str                      # docs/docsite/rst/<name>.rst, label prefix + name
    source: str                    # the Markdown file, from the repository's root
    section: Optional[str] = None  # a level-2 heading of source: that section only
    title: Optional[str] = None    # instead of the source's heading


GUIDES = (
    Guide("using", "docs/using.md"),
    Guide("flows", "docs/flows.md"),
    Guide("openstack_helm", "docs/openstack-helm.md"),
    Guide("site_example", "README.md", "A whole site", title="A whole site, by example"),
    Guide("design", "docs/design.md"),
    Guide("rbac", "docs/rbac.md"),
    Guide("awx", "docs/awx.md"),
    Guide("site", "docs/site.md"),
    Guide("update_status", "docs/update-status.md"),
    Guide("benchmarks", "docs/benchmarks.md"),
    Guide("test_bed", "docs/test-bed.md"),
    Guide("development", "docs/development.md"),
    Guide("docsite", "docs/docsite.md"),
)

# Title adornments by depth: the page's title, then its sections.
ADORNMENTS = ("=", "-", "~", "^", '"')
# What may stand right before and right after inline markup without an escaped space.
BEFORE = set(" \n\t-:/'\"<([{")
AFTER = set(" \n\t-.,:;!?\\/'\")]}>")
LANGUAGES = {"": "text", "sh": "shell", "yml": "yaml"}


class Unsupported(Exception):
    """Markdown this renderer does not write."""


def parse(text: str) -> SyntaxTreeNode:
    return SyntaxTreeNode(MarkdownIt("commonmark").enable("table").parse(text))


def plain(node: SyntaxTreeNode) -> str:
    """A node's text without its markup."""
    if node.type in ("text", "code_inline", "html_inline"):
        return node.content
    if node.type in ("softbreak", "hardbreak"):
        return " "
    return "".join(plain(c) for c in node.children)


def slug(title: str) -> str:
    """The anchor GitHub gives a heading."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def escape(text: str) -> str:
    return re.sub(r"([\\*`_|])", r"\\\1", text)


def blocks_of(guide: Guide, tree: SyntaxTreeNode) -> List[SyntaxTreeNode]:
    """The guide's top-level blocks: the whole file, or one section's."""
    nodes = list(tree.children)
    if guide.section is None:
        return nodes
    start = next((i for i, n in enumerate(nodes) if n.type == "heading" and n.tag == "h2"
                  and plain(n) == guide.section), None)
    if start is None:
        raise Unsupported(f"{guide.source} has no section {guide.section!r}")
    end = next((i for i in range(start + 1, len(nodes)) if nodes[i].type == "heading"
                and nodes[i].tag in ("h1", "h2")), len(nodes))
    return nodes[start:end]


class Site:
    """Every guide's headings, so that a link to a file or a heading of one
    becomes a reference to the page (and the section) that holds it."""

    def __init__(self, guides=GUIDES, root: Path = ROOT) -> None:
        self.guides, self.root = guides, root
        self.trees: Dict[str, SyntaxTreeNode] = {}
        self.anchors: Dict[Tuple[str, str], str] = {}   # (source, GitHub anchor) -> label
        self.pages: Dict[str, str] = {}                 # whole-file source -> label
        for guide in guides:
            if guide.source not in self.trees:
                self.trees[guide.source] = parse((root / guide.source).read_text(encoding="utf-8"))
            if guide.section is None:
                self.pages[guide.source] = LABEL_PREFIX + guide.name
            for anchor, label in heading_labels(guide, blocks_of(guide, self.trees[guide.source])):
                self.anchors[(guide.source, anchor)] = label

    def target(self, source: str, href: str) -> Tuple[str, str]:
        """("ref", label) for a page or section of the site, else ("url", address)."""
        if re.match(r"^[a-z][a-z0-9+.-]*:", href):
            return "url", href
        path, anchor = (href.split("#", 1) + [""])[:2]
        if path:
            resolved = (self.root / source).parent.joinpath(path).resolve()
            try:
                path = resolved.relative_to(self.root.resolve()).as_posix()
            except ValueError as exc:
                raise Unsupported(f"{source}: link {href!r} leaves the repository") from exc
        else:
            path = source
        if anchor and (path, anchor) in self.anchors:
            return "ref", self.anchors[(path, anchor)]
        if anchor and path.endswith(".md"):
            raise Unsupported(f"{source}: link {href!r}: no heading of {path} in the site has that anchor")
        if path in self.pages:
            return "ref", self.pages[path]
        if not (self.root / path).exists():
            raise Unsupported(f"{source}: link {href!r}: {path} does not exist")
        kind = "tree" if (self.root / path).is_dir() else "blob"
        return "url", f"{REPOSITORY}/{kind}/main/{path}" + (f"#{anchor}" if anchor else "")


def heading_labels(guide: Guide, nodes: List[SyntaxTreeNode]) -> List[Tuple[str, str]]:
    """(GitHub anchor, label) of each heading of the guide, the first being the page's."""
    out, seen = [], {}  # type: List[Tuple[str, str]], Dict[str, int]
    for index, node in enumerate(n for n in nodes if n.type == "heading"):
        anchor = slug(plain(node))
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        anchor = anchor if not count else f"{anchor}-{count}"
        out.append((anchor, LABEL_PREFIX + guide.name + ("" if index == 0 else "." + anchor.replace("-", "_"))))
    return out


class Renderer:
    """RST of one guide."""

    def __init__(self, site: Site, guide: Guide, modules: List[str], roles: List[str]) -> None:
        self.site, self.guide, self.modules, self.roles = site, guide, modules, roles
        self.top = 0

    def page(self) -> str:
        nodes = blocks_of(self.guide, self.site.trees[self.guide.source])
        if not nodes or nodes[0].type != "heading":
            raise Unsupported(f"{self.guide.source}: the page does not start with a heading")
        self.top = int(nodes[0].tag[1])
        labels = iter(heading_labels(self.guide, nodes))
        where = self.guide.source + (f' ("{self.guide.section}")' if self.guide.section else "")
        out = [f"..\n  Written by {THIS} from {where}: edit the Markdown, then run make docs."]
        for node in nodes:
            if node.type == "heading":
                out.append(f".. _{next(labels)[1]}:")
            out.append(self.block(node))
        return "\n\n".join(out) + "\n"

    # -- blocks ----------------------------------------------------------------
    def block(self, node: SyntaxTreeNode) -> str:
        kind = node.type
        if kind == "heading":
            return self.heading(node)
        if kind == "paragraph":
            return self.inline(node.children[0])
        if kind in ("fence", "code_block"):
            language = (node.info or "").split()[0] if node.info else ""
            body = "\n".join(("    " + line) if line else "" for line in node.content.rstrip("\n").split("\n"))
            return f".. code-block:: {LANGUAGES.get(language, language)}\n\n{body}"
        if kind in ("bullet_list", "ordered_list"):
            return self.listing(node)
        if kind == "table":
            return self.table(node)
        if kind == "hr":
            return "----"
        if kind == "html_block" and node.content.strip().startswith("<!--"):
            return ".."
        raise Unsupported(f"{self.guide.source}: line {node.map[0] + 1 if node.map else '?'}: {kind} is not rendered")

    def heading(self, node: SyntaxTreeNode) -> str:
        depth = int(node.tag[1]) - self.top
        text = self.guide.title if depth == 0 and self.guide.title else self.inline(node.children[0])
        line = ADORNMENTS[depth] * len(text)
        return f"{line}\n{text}\n{line}" if depth == 0 else f"{text}\n{line}"

    def listing(self, node: SyntaxTreeNode) -> str:
        items = []
        for number, item in enumerate(node.children, start=int(node.attrs.get("start", 1))):
            marker = f"{number}. " if node.type == "ordered_list" else "- "
            body = "\n\n".join(self.block(child) for child in item.children) or "\\"
            indent = " " * len(marker)
            items.append(marker + body.replace("\n", "\n" + indent).replace("\n" + indent + "\n", "\n\n"))
        return "\n\n".join(re.sub(r"[ ]+\n", "\n", item) for item in items)

    def table(self, node: SyntaxTreeNode) -> str:
        rows = [row for part in node.children for row in part.children]
        header = len(node.children[0].children) if node.children[0].type == "thead" else 0
        out = [".. list-table::", f"   :header-rows: {header}", ""]
        for row in rows:
            for index, cell in enumerate(row.children):
                text = self.inline(cell.children[0]) if cell.children else ""
                out.append(("   * - " if index == 0 else "     - ") + (text or "\\"))
        return "\n".join(out)

    # -- inline ------------------------------------------------------------------
    def inline(self, node: SyntaxTreeNode) -> str:
        parts: List[Tuple[bool, str]] = []   # (is markup, RST)
        for child in node.children:
            parts.append(self.span(child))
        out = ""
        for index, (markup, text) in enumerate(parts):
            if markup and out and out[-1] not in BEFORE:
                out += "\\ "
            out += text
            following = parts[index + 1][1] if index + 1 < len(parts) else ""
            if markup and following and following[0] not in AFTER:
                out += "\\ "
        return out

    def span(self, node: SyntaxTreeNode) -> Tuple[bool, str]:
        kind = node.type
        if kind == "text":
            return False, escape(node.content)
        if kind == "softbreak":
            return False, "\n"
        if kind == "hardbreak":
            return False, "\n"
        if kind == "code_inline":
            return True, self.code(node.content)
        if kind in ("strong", "em"):
            mark = "**" if kind == "strong" else "*"
            return True, f"{mark}{escape(plain(node))}{mark}"
        if kind == "link":
            text = re.sub(r"([<>`\\])", r"\\\1", plain(node)).replace("\n", " ")
            how, where = self.site.target(self.guide.source, node.attrs["href"])
            return True, f":ref:`{text} <{where}>`" if how == "ref" else f"`{text} <{where}>`__"
        if kind == "html_inline":
            return False, escape(node.content)
        raise Unsupported(f"{self.guide.source}: inline {kind} is not rendered")

    def code(self, content: str) -> str:
        """An inline literal; the name of a module or role of the collection links to its page."""
        match = re.fullmatch(r"lcm\.openstack\.(\w+)", content)
        if match and match.group(1) in self.modules:
            return f":ansplugin:`{content}#module`"
        if match and match.group(1) in self.roles:
            return f":ansplugin:`{content}#role`"
        if "``" in content or content != content.strip() or not content:
            # not an inline literal: a role, whose text only escapes backslash and backquote
            return ":literal:`" + re.sub(r"([\\`])", r"\\\1", content) + "`"
        return f"``{content}``"


def render_all(root: Path = ROOT, guides=GUIDES, plugins: Optional[Tuple[List[str], List[str]]] = None) -> Dict[str, str]:
    """{file name in docs/docsite/rst: its content} for every guide. plugins:
    the (modules, roles) whose names link to their pages; by default those of root."""
    site = Site(guides, root)
    if plugins is None:
        plugins = (sorted(p.stem for p in (root / "plugins" / "modules").glob("*.py") if p.stem != "__init__"),
                   sorted(p.name for p in (root / "roles").iterdir() if (p / "meta" / "argument_specs.yml").is_file()))
    return {f"{g.name}.rst": Renderer(site, g, *plugins).page() for g in guides}


def stale(root: Path = ROOT, guides=GUIDES, plugins: Optional[Tuple[List[str], List[str]]] = None) -> List[str]:
    """The files of docs/docsite/rst that differ from what the Markdown gives, or are extra."""
    rendered = render_all(root, guides, plugins)
    directory = root / "docs" / "docsite" / "rst"
    present = {p.name for p in directory.glob("*.rst")} if directory.is_dir() else set()
    out = [name for name, text in sorted(rendered.items())
           if not (directory / name).is_file() or (directory / name).read_text(encoding="utf-8") != text]
    return out + sorted(present - set(rendered))


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="write nothing; fail if a file is out of date")
    args = parser.parse_args(argv)
    if args.check:
        out = stale()
        for name in out:
            print(f"docs/docsite/rst/{name} is out of date: run make docs", file=sys.stderr)
        return 1 if out else 0
    RST_DIR.mkdir(parents=True, exist_ok=True)
    rendered = render_all()
    for path in RST_DIR.glob("*.rst"):
        if path.name not in rendered:
            path.unlink()
    for name, text in rendered.items():
        if not (RST_DIR / name).is_file() or (RST_DIR / name).read_text(encoding="utf-8") != text:
            (RST_DIR / name).write_text(text, encoding="utf-8")
            print(f"wrote docs/docsite/rst/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
