"""The links of the project's Markdown, checked as GitHub follows them: a
relative link names a file or directory of the checkout, and its #anchor,
in a Markdown file, the anchor GitHub gives one of that file's headings.

markdown-it-py parses the files (CommonMark with tables), so a link inside
code is no link, as on GitHub. Links with a scheme (https:, mailto:) are
left alone.

    python -m support.markdown_links [FILE...]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Set, Tuple

from markdown_it import MarkdownIt
from markdown_it.token import Token

from support.paths import ROOT

# The Markdown the project shows: the README, the guides, each role's README
# and the notes beside the tests (the docsite's test fixtures are left out:
# they hold broken links on purpose).
SOURCES = ("README.md", "docs/*.md", "roles/*/README.md", "tests/*/README.md")


def markdown_files(root: Path = ROOT) -> List[Path]:
    return sorted(path for pattern in SOURCES for path in root.glob(pattern))


def slug(title: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation but - and _
    dropped, each space a hyphen."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def _tokens(text: str) -> List[Token]:
    return MarkdownIt("commonmark").enable("table").parse(text)


def _inline_text(token: Token) -> str:
    return "".join(child.content for child in token.children or []
                   if child.type in ("text", "code_inline", "softbreak", "html_inline"))


def anchors(text: str) -> Set[str]:
    """The anchors of a file's headings; a repeated one gets -1, -2, ..."""
    out: Set[str] = set()
    seen: Dict[str, int] = {}
    tokens = _tokens(text)
    for index, token in enumerate(tokens):
        if token.type != "heading_open":
            continue
        anchor = slug(_inline_text(tokens[index + 1]))
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        out.add(anchor if not count else f"{anchor}-{count}")
    return out


def links(text: str) -> Iterator[Tuple[int, str]]:
    """(line, target) of each link and image of a file."""
    for token in _tokens(text):
        if token.type != "inline":
            continue
        line = token.map[0] + 1 if token.map else 0
        for child in token.children or []:
            if child.type == "link_open":
                yield line, str(child.attrs.get("href", ""))
            elif child.type == "image":
                yield line, str(child.attrs.get("src", ""))


def broken(files: Iterable[Path], root: Path = ROOT) -> List[str]:
    """`file:line: link 'target': why` for each link that does not resolve."""
    out: List[str] = []
    cache: Dict[Path, Set[str]] = {}

    def anchors_of(path: Path) -> Set[str]:
        if path not in cache:
            cache[path] = anchors(path.read_text(encoding="utf-8"))
        return cache[path]

    for source in files:
        name = source.relative_to(root).as_posix()
        for line, href in links(source.read_text(encoding="utf-8")):
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", href):
                continue
            path, _sep, anchor = href.partition("#")
            target = (source.parent / path).resolve() if path else source.resolve()
            where = f"{name}:{line}: link {href!r}"
            try:
                target.relative_to(root.resolve())
            except ValueError:
                out.append(f"{where}: leaves the repository")
                continue
            if not target.exists():
                out.append(f"{where}: {target.relative_to(root.resolve()).as_posix()} does not exist")
            elif anchor and target.suffix == ".md" and anchor not in anchors_of(target):
                out.append(f"{where}: no heading of {target.relative_to(root.resolve()).as_posix()} has that anchor")
    return out


def main(argv: List[str]) -> int:
    files = [Path(a).resolve() for a in argv] or markdown_files()
    problems = broken(files)
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
