"""The variables section of each role's README, written from the role's
meta/argument_specs.yml so that the two cannot differ.

The prose above the section is written by hand; the section between the two
markers is replaced as a whole. `make role-readmes` rewrites it;
tests/tooling/test_role_readmes.py fails when a README is not what this
writes.

    python -m support.role_readme [--check] [ROLES_DIR]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any, Dict, List

import yaml

from support.paths import ROOT

BEGIN = "<!-- BEGIN variables: written from meta/argument_specs.yml by `make role-readmes`; edit the spec, not this -->"
END = "<!-- END variables -->"

# Ansible's documentation markup (O(), C(), M(), ...) as Markdown. Only the
# forms that take one argument; L(text,url) names its link.
_CODE = re.compile(r"\b[CMOVEPR]V?\(([^()]*)\)")
_ITALIC = re.compile(r"\bI\(([^()]*)\)")
_BOLD = re.compile(r"\bB\(([^()]*)\)")
_URL = re.compile(r"\bU\(([^()]*)\)")
_LINK = re.compile(r"\bL\(([^(),]*),\s*([^()]*)\)")


def markdown(text: str) -> str:
    """One description paragraph, Ansible markup turned into Markdown."""
    text = " ".join(str(text).split())
    text = _LINK.sub(r"[\1](\2)", text)
    text = _URL.sub(r"<\1>", text)
    text = _BOLD.sub(r"**\1**", text)
    text = _ITALIC.sub(r"*\1*", text)
    return _CODE.sub(r"`\1`", text)


def _paragraphs(description: Any) -> List[str]:
    if description is None:
        return []
    items = description if isinstance(description, list) else [description]
    return [markdown(item) for item in items]


def _shown(value: Any) -> str:
    """A default or a choice as YAML would write it, in one line."""
    dumped = yaml.safe_dump(value, default_flow_style=True, width=10 ** 6).strip()
    return dumped.split("\n...")[0]


def _facts(spec: Dict[str, Any]) -> str:
    """`list of str, required` / `int, default 600` / `str, one of a, b`."""
    kind = spec.get("type", "str")
    if spec.get("elements"):
        kind = f"{kind} of {spec['elements']}"
    facts = [kind]
    if spec.get("required"):
        facts.append("required")
    elif "default" in spec:
        facts.append(f"default `{_shown(spec['default'])}`")
    if spec.get("choices"):
        facts.append("one of " + ", ".join(f"`{_shown(c)}`" for c in spec["choices"]))
    return ", ".join(facts)


def _options(options: Dict[str, Any], depth: int) -> List[str]:
    lines: List[str] = []
    indent = "  " * depth
    for name in sorted(options):
        spec = options[name] or {}
        paragraphs = _paragraphs(spec.get("description"))
        first = f" {paragraphs[0]}" if paragraphs else ""
        lines.append(f"{indent}- `{name}` ({_facts(spec)}):{first}")
        for more in paragraphs[1:]:
            lines.append(f"{indent}  {more}")
        if spec.get("options"):
            lines += _options(spec["options"], depth + 1)
    return lines


def section(role: str, specs: Dict[str, Any]) -> str:
    """The generated section, markers included, for a role's argument_specs."""
    lines = [BEGIN, "## Variables", ""]
    entry_points = specs.get("argument_specs") or {}
    for entry in sorted(entry_points, key=lambda e: (e != "main", e)):
        spec = entry_points[entry] or {}
        if entry != "main":
            lines += [f"### Entry point `{entry}`", ""]
        lines.append(f"`ansible-doc -t role lcm.openstack.{role}` shows the same.")
        lines.append("")
        lines += _options(spec.get("options") or {}, 0) or ["None."]
        lines.append("")
    lines.append(END)
    return "\n".join(lines) + "\n"


def updated(readme: str, role: str, specs: Dict[str, Any]) -> str:
    """The README with its variables section written afresh (appended when
    it has none)."""
    new = section(role, specs)
    start, end = readme.find(BEGIN), readme.find(END)
    if start < 0 and end < 0:
        return readme.rstrip("\n") + "\n\n" + new
    if start < 0 or end < start:
        raise ValueError(f"role {role}: README has one variables marker without the other")
    rest = readme[end + len(END):].lstrip("\n")
    return readme[:start] + new + (f"\n{rest}" if rest else "")


def stale(roles_dir: Path, write: bool) -> List[str]:
    """The roles whose README is not what their spec gives; rewritten when
    `write`."""
    out = []
    for role_dir in sorted(p for p in roles_dir.iterdir() if (p / "meta/argument_specs.yml").is_file()):
        readme = role_dir / "README.md"
        text = readme.read_text() if readme.is_file() else f"# lcm.openstack.{role_dir.name}\n"
        specs = yaml.safe_load((role_dir / "meta/argument_specs.yml").read_text())
        want = updated(text, role_dir.name, specs)
        if want != text or not readme.is_file():
            out.append(role_dir.name)
            if write:
                readme.write_text(want)
    return out


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="write nothing; fail when a README is out of date")
    parser.add_argument("roles_dir", nargs="?", type=Path, default=ROOT / "roles")
    args = parser.parse_args(argv)
    changed = stale(args.roles_dir, write=not args.check)
    for role in changed:
        print(f"roles/{role}/README.md: {'out of date' if args.check else 'written'}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
