"""Each role's README carries its variables as its meta/argument_specs.yml
gives them (tests/support/role_readme.py writes that section; `make
role-readmes` rewrites it). Galaxy shows the README as the role's page."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from support import role_readme
from support.paths import ROOT

FIXTURE = yaml.safe_load((Path(__file__).parent / "fixtures/role_readme.yaml").read_text())
ROLES = sorted(p.name for p in (ROOT / "roles").iterdir() if (p / "meta/argument_specs.yml").is_file())


def test_every_role_has_an_argument_spec_and_a_readme() -> None:
    assert sorted(p.name for p in (ROOT / "roles").iterdir() if p.is_dir()) == ROLES
    for role in ROLES:
        assert (ROOT / "roles" / role / "README.md").is_file(), role


@pytest.mark.parametrize("role", ROLES)
def test_the_readme_lists_the_variables_of_the_spec(role: str) -> None:
    readme = (ROOT / "roles" / role / "README.md").read_text()
    specs = yaml.safe_load((ROOT / "roles" / role / "meta/argument_specs.yml").read_text())
    assert readme == role_readme.updated(readme, role, specs), \
        f"roles/{role}/README.md is out of date with its meta/argument_specs.yml: run make role-readmes"
    for name in specs["argument_specs"]["main"]["options"]:
        assert f"- `{name}` (" in readme, name


def test_the_section_from_a_spec() -> None:
    assert role_readme.section("example", FIXTURE["specs"]) == FIXTURE["section"]


def test_a_readme_without_the_section_gets_it_appended_after_its_prose() -> None:
    out = role_readme.updated("# lcm.openstack.example\n\nProse.\n", "example", FIXTURE["specs"])
    assert out == "# lcm.openstack.example\n\nProse.\n\n" + FIXTURE["section"]


def test_only_the_section_is_replaced_and_what_follows_it_stays() -> None:
    old = f"# title\n\nProse.\n\n{role_readme.BEGIN}\nstale\n{role_readme.END}\n\n## After\n\nKept.\n"
    out = role_readme.updated(old, "example", FIXTURE["specs"])
    assert out == "# title\n\nProse.\n\n" + FIXTURE["section"] + "\n## After\n\nKept.\n"
    assert role_readme.updated(out, "example", FIXTURE["specs"]) == out


def test_a_lone_marker_is_an_error() -> None:
    with pytest.raises(ValueError, match="one variables marker"):
        role_readme.updated(f"# title\n{role_readme.BEGIN}\n", "example", FIXTURE["specs"])


def test_check_fails_on_a_spec_change_and_the_rewrite_fixes_it(tmp_path: Path) -> None:
    roles = tmp_path / "roles"
    shutil.copytree(ROOT / "roles" / "crds", roles / "crds")
    assert role_readme.main(["--check", str(roles)]) == 0
    spec_file = roles / "crds/meta/argument_specs.yml"
    specs = yaml.safe_load(spec_file.read_text())
    specs["argument_specs"]["main"]["options"]["crds_new_option"] = {"description": "New.", "type": "int", "default": 3}
    spec_file.write_text(yaml.safe_dump(specs))
    assert role_readme.main(["--check", str(roles)]) == 1
    assert "crds_new_option" not in (roles / "crds/README.md").read_text()
    assert role_readme.main([str(roles)]) == 0
    assert "- `crds_new_option` (int, default `3`): New." in (roles / "crds/README.md").read_text()
    assert role_readme.main(["--check", str(roles)]) == 0
