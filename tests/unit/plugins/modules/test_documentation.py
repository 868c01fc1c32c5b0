"""plugins/modules: every module is documented as it validates (its own
options and its doc fragments', option by option), and main() builds it from
that argument spec with check mode supported."""

from __future__ import annotations

import importlib
import re
from types import ModuleType

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.action import flow_inputs as action
from ansible_collections.lcm.openstack.plugins.module_utils.adapter import flow_steps

from support.module_docs import built_with, differences, documented_doc, documented_options
from support.paths import ROOT

# A module that an action plugin of the same name runs on the controller
# carries only the documentation (as ansible.builtin.set_fact does): it has no
# main(). Every other module has an action plugin too, which runs it as a
# module (plugin_utils/module_action.py); the ones that wait show their
# progress (plugin_utils/progress_action.py).
ACTIONS = sorted(p.stem for p in (ROOT / "plugins" / "action").glob("*.py") if p.stem != "__init__")
CONTROLLER_ONLY = sorted(a for a in ACTIONS if "def main(" not in (ROOT / "plugins" / "modules" / f"{a}.py").read_text())
MODULES = sorted(p.stem for p in (ROOT / "plugins" / "modules").glob("*.py")
                 if p.stem not in ("__init__", *CONTROLLER_ONLY))


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"ansible_collections.lcm.openstack.plugins.modules.{name}")


def test_every_module_is_here() -> None:
    assert CONTROLLER_ONLY == ["flow_inputs", "flow_steps"]
    assert sorted(set(ACTIONS) - set(CONTROLLER_ONLY)) == MODULES
    waits = sorted(a for a in ACTIONS if "ProgressAction" in (ROOT / "plugins" / "action" / f"{a}.py").read_text())
    assert waits == ["helm_release", "phase", "service_lifecycle", "traffic"]
    assert MODULES == ["helm_release", "helm_release_info", "phase", "phase_info", "service_lifecycle", "site_plan", "traffic",
                       "update_status"]


@pytest.mark.parametrize("name", MODULES)
def test_the_documentation_is_the_argument_spec(name: str) -> None:
    module = _module(name)
    assert differences(module.argument_spec(), documented_options(module)) == []


@pytest.mark.parametrize("name", MODULES)
def test_main_builds_the_module_from_that_spec_with_check_mode(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    module = _module(name)
    built = built_with(module, monkeypatch)
    assert built["argument_spec"] == module.argument_spec() and built["supports_check_mode"] is True


def test_the_action_plugins_options_are_documented_on_their_module() -> None:
    documented = yaml.safe_load(_module("flow_inputs").DOCUMENTATION)["options"]
    assert set(documented) == set(action._ARGS)
    assert set(yaml.safe_load(_module("flow_steps").DOCUMENTATION)["options"]) == set(flow_steps.ARGS)


# -- requirements, attributes and seealso ------------------------------------------------------

# The modules import kubernetes and PyYAML (module_utils/common/compat.py);
# everything else a module's requirements name is a program it runs.
PYTHON_LIBRARIES = {"kubernetes", "pyyaml"}
PROGRAMS = {"helm"}
SUPPORT = {"full", "partial", "none", "N/A"}


def _minimums() -> dict:
    """requirements.txt as {name (lower case): minimum version}."""
    out = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, minimum = (part.strip() for part in line.split(">="))
            out[name.lower()] = minimum
    return out


@pytest.mark.parametrize("name", MODULES)
def test_the_requirements_are_those_of_requirements_txt(name: str) -> None:
    minimums = _minimums()
    said = documented_doc(_module(name))["requirements"]
    libraries = {}
    for requirement in said:
        first = requirement.split()[0]
        if first.lower() in minimums:
            libraries[first.lower()] = requirement
        else:
            assert first in PROGRAMS, f"{name}: {requirement!r} is neither in requirements.txt nor a program"
    assert set(libraries) == PYTHON_LIBRARIES
    for library, requirement in libraries.items():
        assert requirement.lower() == f"{library} >= {minimums[library]}".lower()


def test_requirements_txt_is_read_as_minimums() -> None:
    assert {"kubernetes", "pyyaml"} <= set(_minimums()) and _minimums()["kubernetes"][0].isdigit()


@pytest.mark.parametrize("name", MODULES)
def test_every_attribute_says_its_support(name: str) -> None:
    attributes = documented_doc(_module(name))["attributes"]
    assert set(attributes) == {"check_mode", "diff_mode", "action_group", "platform"}
    for attribute, said in attributes.items():
        assert said.get("description"), f"{name}: {attribute} has no description"
        assert said.get("support") in SUPPORT, f"{name}: {attribute} support {said.get('support')!r}"
        if said["support"] == "partial":
            assert said.get("details"), f"{name}: {attribute} is partial without details"
    # main() builds every module with supports_check_mode=True (above).
    assert attributes["check_mode"]["support"] == "full"
    assert attributes["platform"]["platforms"] == "posix"


@pytest.mark.parametrize("name", MODULES)
def test_the_action_group_is_that_of_meta_runtime(name: str) -> None:
    groups = yaml.safe_load((ROOT / "meta" / "runtime.yml").read_text())["action_groups"]
    member_of = sorted(f"lcm.openstack.{group}" for group, members in groups.items() if name in members)
    assert documented_doc(_module(name))["attributes"]["action_group"]["membership"] == member_of == ["lcm.openstack.lifecycle"]


@pytest.mark.parametrize("name", MODULES)
def test_diff_support_is_claimed_only_where_the_adapter_returns_a_diff(name: str) -> None:
    adapter = (ROOT / "plugins" / "module_utils" / "adapter" / f"{name}.py").read_text()
    diff = documented_doc(_module(name))["attributes"]["diff_mode"]["support"]
    assert (diff in ("full", "partial")) == ("module._diff" in adapter)


def _slugs(markdown: str) -> set:
    """The anchors GitHub gives a Markdown file's headings."""
    out = set()
    for line in markdown.splitlines():
        if line.startswith("#") and not line.startswith("#!"):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return out


@pytest.mark.parametrize("name", MODULES)
def test_seealso_points_at_what_exists(name: str) -> None:
    seealso = documented_doc(_module(name))["seealso"]
    repository = yaml.safe_load((ROOT / "galaxy.yml").read_text())["repository"]
    assert seealso
    for entry in seealso:
        assert entry.get("description"), entry
        if "module" in entry:
            assert entry["module"].startswith("lcm.openstack.") and entry["module"] != f"lcm.openstack.{name}"
            assert entry["module"].split(".")[-1] in MODULES, entry
        else:
            assert entry["link"].startswith(f"{repository}/blob/main/") and entry.get("name"), entry
            path, anchor = (entry["link"][len(f"{repository}/blob/main/"):].split("#") + [""])[:2]
            assert (ROOT / path).is_file(), entry
            assert not anchor or anchor in _slugs((ROOT / path).read_text()), entry


def test_slugs_are_githubs() -> None:
    assert _slugs("# lcm.openstack\n## The flows\n### Following a run: the `lifecycle_summary` callback\n") == \
        {"lcmopenstack", "the-flows", "following-a-run-the-lifecycle_summary-callback"}
