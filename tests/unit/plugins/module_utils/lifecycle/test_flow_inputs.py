"""The flow playbooks' inputs: each checked on its own, typed, reported together."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import flow_inputs
from support.paths import UNIT_FIXTURES

FIXTURES = UNIT_FIXTURES / "flow_inputs"
GOOD = yaml.safe_load((FIXTURES / "good.yaml").read_text())
BAD = yaml.safe_load((FIXTURES / "bad.yaml").read_text())


def _check(raw: dict, **kw) -> tuple:
    return flow_inputs.check(flow_inputs.read(raw), **kw)


@pytest.mark.parametrize("case", GOOD, ids=[c["name"] for c in GOOD])
def test_good_inputs_are_typed(case: dict) -> None:
    typed, errors = _check(case["raw"])
    assert errors == []
    assert {k: typed[k] for k in case["typed"]} == case["typed"]
    assert set(typed) == set(flow_inputs.INPUTS)


@pytest.mark.parametrize("case", BAD, ids=[str(c["raw"]) for c in BAD])
def test_each_bad_input_has_its_own_line(case: dict) -> None:
    typed, errors = _check(case["raw"])
    assert errors == ([case["error"]] if case["error"] else [])
    if errors:
        assert case["error"].split(":")[0] not in typed


def test_every_bad_input_is_reported_one_line_each_in_input_order() -> None:
    typed, errors = _check({"service": "keystone", "traffic_backend": "istio", "to_revision": "abc",
                            "phase_timeout": "abc", "values": "a: [1"}, needs_chart=True, needs_version=True)
    assert [e.split(":")[0] for e in errors] == ["chart", "values", "version", "phase_timeout", "traffic_backend",
                                                 "to_revision"]
    assert all("\n" not in e for e in errors)
    assert typed["service"] == "keystone"


def test_required_inputs_depend_on_the_flow() -> None:
    assert _check({"service": "keystone"})[1] == []
    assert _check({"service": "keystone"}, needs_chart=True)[1] == [
        "chart: missing; it is required (for example -e chart=/srv/charts/keystone)"]
    assert _check({"service": "keystone", "version": ""}, needs_version=True)[1] == [
        "version: missing; it is required (for example -e version=2025.1)"]


def test_values_are_never_repeated_in_an_error() -> None:
    errors = _check({"service": "keystone", "values": "password: s3cret\n  bad: [indent"})[1]
    assert len(errors) == 1 and errors[0].startswith("values: expected YAML text that parses")
    assert "s3cret" not in errors[0] and "line 2" in errors[0]


def test_a_long_value_is_cut_in_the_message() -> None:
    (error,) = _check({"service": "keystone", "traffic_target": ["x" * 200]})[1]
    assert error.startswith("traffic_target: got ['xxx") and "..., expected text" in error and len(error) < 160


def test_a_default_given_by_the_playbook_replaces_the_documented_one_and_is_checked() -> None:
    assert _check({"service": "keystone"}, defaults={"dependency_timeout": 3600})[0]["dependency_timeout"] == 3600
    assert _check({"service": "keystone", "dependency_timeout": "60"},
                  defaults={"dependency_timeout": 3600})[0]["dependency_timeout"] == 60
    assert _check({"service": "keystone"}, defaults={"dependency_timeout": "x"})[1] == [
        "dependency_timeout: got 'x', expected a whole number >= 0 (for example -e dependency_timeout=1800)"]


def test_paths_are_made_absolute_from_where_the_playbook_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "chart").mkdir()
    monkeypatch.chdir(tmp_path)
    typed = _check({"service": "keystone", "chart": "chart", "values_files": "values.yaml"})[0]
    assert typed["chart"] == os.path.realpath(tmp_path / "chart")
    assert typed["values_files"] == [os.path.realpath(tmp_path / "values.yaml")]
    # A chart reference that is no directory here (repo/chart, oci://) is kept.
    assert _check({"service": "keystone", "chart": "oci://registry/keystone"})[0]["chart"] == "oci://registry/keystone"


@pytest.mark.parametrize("backend, skipped", [
    ("none", "traffic_backend none"), (" none ", "traffic_backend none"),
    ("service_selector", ""), ("ingress_canary", ""), (None, ""),
])
def test_traffic_backend_none_says_why_the_flow_takes_no_traffic_step(backend: object, skipped: str) -> None:
    typed, errors = _check({"service": "openvswitch", "traffic_backend": backend})
    assert errors == []
    assert flow_inputs.traffic_skipped(typed) == skipped


def test_none_is_one_of_the_backends_an_error_offers() -> None:
    errors = _check({"service": "openvswitch", "traffic_backend": "None"})[1]
    assert errors == ["traffic_backend: got 'None', expected one of service_selector, ingress_canary, openshift_route, "
                      "none (for example -e traffic_backend=ingress_canary)"]
