# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Sphinx's warnings of the docsite build, less those of an offline build.

The site is built with warnings as errors, but it is built offline too,
where the intersphinx inventories (docs.ansible.com, docs.python.org,
jinja) cannot be fetched. Two kinds of warning follow from that, and only
those are dropped:

- "failed to reach any of the inventories", when every line of it names
  an inventory that was not fetchable or not readable;
- "undefined label" of a label outside this collection (the Ansible docs'
  common_return_values, another collection's module page), and only when an
  inventory could not be reached in the same build. A label of this
  collection (ansible_collections.lcm.openstack.*) is never one an
  inventory gives: its warning always stays.

    python hacking/docsite_warnings.py warnings.log   # prints the rest; fails if any
"""

from __future__ import annotations

import re
import sys
from typing import List

OWN_LABELS = "ansible_collections.lcm.openstack."
_START = re.compile(r"(WARNING|ERROR|CRITICAL):")
_UNREACHED = "WARNING: failed to reach any of the inventories with the following issues:"
_INVENTORY = re.compile(r"^intersphinx inventory '[^']+' not (fetchable|readable) due to ")
_UNDEFINED = re.compile(r"WARNING: undefined label: '([^']+)'")


def entries(text: str) -> List[List[str]]:
    """The warnings of a Sphinx warning file, each with its continuation lines."""
    out: List[List[str]] = []
    for line in text.splitlines():
        if _START.search(line) or not out:
            out.append([line])
        else:
            out[-1].append(line)
    return [entry for entry in out if any(line.strip() for line in entry)]


def _offline(entry: List[str]) -> bool:
    return entry[0].endswith(_UNREACHED) and len(entry) > 1 and all(_INVENTORY.match(line) for line in entry[1:])


def real(text: str) -> List[List[str]]:
    """The warnings that are not explained by an unreachable inventory."""
    found = entries(text)
    unreached = any(_offline(entry) for entry in found)
    out = []
    for entry in found:
        if _offline(entry):
            continue
        undefined = _UNDEFINED.search(entry[0])
        if unreached and undefined and not undefined.group(1).startswith(OWN_LABELS) and len(entry) == 1:
            continue
        out.append(entry)
    return out


def main(argv: List[str]) -> int:
    with open(argv[0], encoding="utf-8") as handle:
        left = real(handle.read())
    for entry in left:
        print("\n".join(entry), file=sys.stderr)
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
