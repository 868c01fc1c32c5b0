"""plugins/module_utils/drift/values.py: which keys of the values asked for
differ from the deployed revision's. Cases in fixtures/drift/values.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError
from ansible_collections.lcm.openstack.plugins.module_utils.drift.values import asked_values, at_key, changed_keys
from support.paths import UNIT_FIXTURES

CASES = yaml.safe_load((UNIT_FIXTURES / "drift" / "values.yaml").read_text())


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_changed_keys(case: Dict[str, Any]) -> None:
    assert changed_keys(case["asked"], case["deployed"]) == case["keys"]


def test_the_same_change_is_named_the_other_way_round() -> None:
    """Added on one side is removed on the other: the sides are not confused."""
    assert changed_keys({"a": 1}, {}) == ["a (added)"]
    assert changed_keys({}, {"a": 1}) == ["a (removed)"]


def test_nothing_given_on_either_side() -> None:
    assert changed_keys({}, {}) == []
    assert changed_keys({"a": 1}, None) == ["a (added)"]  # type: ignore[arg-type]


def test_only_keys_are_named_never_values() -> None:
    keys = changed_keys({"endpoints": {"auth": {"password": "n3w-s3cret"}}},
                        {"endpoints": {"auth": {"password": "0ld-s3cret"}}})
    assert keys == ["endpoints.auth.password"]
    assert "s3cret" not in repr(keys)


def _write(path: Path, data: Any) -> str:
    path.write_text(yaml.safe_dump(data))
    return str(path)


def test_asked_values_merges_files_then_the_mapping_as_helm_does(tmp_path: Path) -> None:
    first = _write(tmp_path / "first.yaml",
                   {"conf": {"debug": False, "workers": 2}, "hosts": ["a", "b"], "pod": {"replicas": {"api": 1}}})
    second = _write(tmp_path / "second.yaml", {"conf": {"workers": 4}, "hosts": ["c"]})
    merged = asked_values([first, second], {"conf": {"debug": True}, "pod": {"replicas": {"api": 3}}})
    # Mappings merge key by key; a list is replaced whole; the mapping given last wins.
    assert merged == {"conf": {"debug": True, "workers": 4}, "hosts": ["c"], "pod": {"replicas": {"api": 3}}}


def test_asked_values_a_later_file_wins_over_an_earlier_one(tmp_path: Path) -> None:
    first = _write(tmp_path / "first.yaml", {"conf": {"level": "info"}})
    second = _write(tmp_path / "second.yaml", {"conf": {"level": "debug"}})
    assert asked_values([first, second], {}) == {"conf": {"level": "debug"}}
    assert asked_values([second, first], {}) == {"conf": {"level": "info"}}


def test_asked_values_an_empty_file_and_no_mapping(tmp_path: Path) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    assert asked_values([str(empty)], None) == {}  # type: ignore[arg-type]
    assert asked_values([], {"a": 1}) == {"a": 1}


def test_asked_values_leaves_the_mapping_given_as_it_was(tmp_path: Path) -> None:
    given = {"conf": {"debug": True}}
    path = _write(tmp_path / "f.yaml", {"conf": {"workers": 2}})
    asked_values([path], given)
    assert given == {"conf": {"debug": True}}


@pytest.mark.parametrize("key, expected", [
    ("conf.debug", True),
    ("conf", {"debug": True, "hosts": ["a"]}),
    ("conf.hosts", ["a"]),
    ("conf.debug (added)", True),  # as changed_keys names an added key
    ("conf.workers (removed)", None),
    ("conf.debug.deeper", None),  # under a scalar
    ("absent.key", None),
])
def test_at_key(key: str, expected: Any) -> None:
    assert at_key({"conf": {"debug": True, "hosts": ["a"]}}, key) == expected


def test_asked_values_a_file_missing_or_not_yaml_is_refused_naming_it(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^values file .*absent\.yaml cannot be read \(values_files\)"):
        asked_values([str(tmp_path / "absent.yaml")], {})
    broken = tmp_path / "broken.yaml"
    broken.write_text("conf: [unclosed\n")
    with pytest.raises(InputError, match=r"^values file .*broken\.yaml cannot be read"):
        asked_values([str(broken)], {})
