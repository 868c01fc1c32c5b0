"""bench/site_noop.py, the no-op site bench's pure parts: the site it deploys (values inline and
in files), what a run of playbooks/site.yml printed (its recap, plan and summary) read back to
tell a no-op from a run that did something, and the target judged."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_site_noop", ROOT / "bench" / "site_noop.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench
_spec.loader.exec_module(bench)

# A real drift no-op of a site of six services (s00..s05 in three levels), as the default callback printed it.
RUN = (Path(__file__).parent / "fixtures" / "site_noop_run.log").read_text()
HOSTS = [f"s{i:02d}" for i in range(6)]


def test_a_no_op_run_reads_as_one() -> None:
    assert bench.noop_problems(RUN, HOSTS, drift=True) == []
    assert bench.recap(RUN)["s00"] == {"ok": 8, "changed": 0, "unreachable": 0, "failed": 0, "skipped": 4,
                                       "rescued": 0, "ignored": 0}
    assert sorted(bench.recap(RUN)) == HOSTS
    plan = bench.plan_of(RUN)
    assert plan["headline"] == "site plan (deploy): 6 service(s) in 3 level(s); nothing 6; nothing to do"
    assert plan["services"]["s02"] == {"level": 1, "flow": "nothing", "reason": "Operational at 2025.1"}
    assert [e["level"] for _name, e in sorted(plan["services"].items())] == [0, 0, 1, 1, 2, 2]
    assert bench.summary_of(RUN) == {h: "Nothing to do" for h in HOSTS}
    assert bench.reported(RUN) == []


def test_a_change_in_the_recap_is_not_a_no_op() -> None:
    changed = RUN.replace("s03                        : ok=3    changed=0    unreachable=0    failed=0",
                          "s03                        : ok=3    changed=2    unreachable=0    failed=0")
    assert changed != RUN
    assert bench.noop_problems(changed, HOSTS, drift=False) == ["s03: changed=2 failed=0 unreachable=0"]


def test_a_host_the_run_left_out_is_not_a_no_op() -> None:
    assert bench.noop_problems(RUN, HOSTS + ["s06"], drift=False) == [
        "s06: not in the PLAY RECAP", "s06: not in the plan", "s06: not in the summary"]


def test_a_flow_planned_is_not_a_no_op_and_its_reason_is_named() -> None:
    row = '"2      s04      nothing  2025.1   bench-noop-7a44b2-s03/s03                            -       Operational at 2025.1"'
    planned = RUN.replace(row, row.replace("nothing", "update ").replace(
        "Operational at 2025.1", "values asked differ: conf.keystone.DEFAULT.debug"))
    summary = '"2      s04      nothing  Nothing to do  2025.1    1s        -"'
    planned = planned.replace(summary, summary.replace("Nothing to do", "Succeeded    "))
    assert planned.count("update ") == 1 and planned.count("Succeeded") == 1
    assert bench.plan_of(planned)["services"]["s04"]["flow"] == "update"
    assert bench.noop_problems(planned, HOSTS, drift=True) == [
        "s04: planned update (values asked differ: conf.keystone.DEFAULT.debug)", "s04: Succeeded"]


def test_a_drift_run_that_did_not_compare_a_release_measured_nothing() -> None:
    row = '"0      s01      nothing  2025.1   -                                                    -       Operational at 2025.1"'
    unread = RUN.replace(row, row[:-1] + '; its release was not compared: HELM_DRIVER=sql"')
    assert unread != RUN
    assert bench.noop_problems(unread, HOSTS, drift=False) == []
    assert bench.noop_problems(unread, HOSTS, drift=True) == [
        "s01: Operational at 2025.1; its release was not compared: HELM_DRIVER=sql"]


def test_a_live_drift_reported_is_counted_not_refused() -> None:
    row = '"1      s03      nothing  2025.1   bench-noop-7a44b2-s00/s00                            -       Operational at 2025.1"'
    noted = RUN.replace(row, row[:-1] + '; Deployment/keystone-api drifted: spec.replicas (reported; drift: correct"')
    assert bench.noop_problems(noted, HOSTS, drift=True) == []
    assert bench.reported(noted) == ["s03"]


def test_output_without_a_plan_or_a_recap_is_no_no_op() -> None:
    problems = bench.noop_problems("ERROR! the playbook could not be read\n", ["s00"], drift=False)
    assert problems == ["s00: not in the PLAY RECAP", "no site plan in the output", "s00: not in the plan",
                        "s00: not in the summary"]


def test_each_service_has_values_inline_and_in_two_files(tmp_path: Path) -> None:
    hosts = bench.site_hosts(6, 3, 7, "bench-noop-1", tmp_path / "values")
    assert sorted(hosts) == HOSTS
    s01 = hosts["s01"]
    assert s01["openstack_namespace"] == "bench-noop-1-s01"
    # bench/site.py's job durations (1 s jobs) with the inline values merged beside them
    assert s01["values"]["simulate"]["duration"] == {"db_init": "1s", "db_sync": "1s", "bootstrap": "1s",
                                                     "rally_test": "1s"}
    assert s01["values"]["conf"]["keystone"]["DEFAULT"]["debug"] is False
    assert hosts["s00"]["values"]["conf"]["keystone"]["DEFAULT"]["debug"] is True
    assert s01["values_files"] == [str(tmp_path / "values" / "site.yaml"), str(tmp_path / "values" / "s01.yaml")]
    own = yaml.safe_load(Path(s01["values_files"][1]).read_text())
    assert own["conf"]["keystone"]["token"]["expiration"] == 3660
    assert own["endpoints"]["identity"]["host"] == "keystone-api-1"
    shared = yaml.safe_load(Path(s01["values_files"][0]).read_text())
    assert shared["endpoints"]["oslo_db"]["host"] == "mariadb.bench"
    # The plan prints what differs: no password among the values given.
    for h in hosts.values():
        text = yaml.safe_dump(h["values"]) + "".join(Path(f).read_text() for f in h["values_files"])
        assert "password" not in text


def test_values_merge_key_by_key() -> None:
    assert bench.merged({"a": {"b": 1, "c": 2}, "d": 1}, {"a": {"c": 3, "e": 4}, "d": {"x": 1}}) == {
        "a": {"b": 1, "c": 3, "e": 4}, "d": {"x": 1}}


def test_the_target_is_twice_the_versions_only_plan_and_under_ten_seconds() -> None:
    assert bench.judge(4.0, 7.9) == (pytest.approx(1.975), True)
    assert bench.judge(4.0, 8.1) == (pytest.approx(2.025), False)
    assert bench.judge(6.0, 10.0) == (pytest.approx(10 / 6), False)  # within 2x, not below 10 s
    assert bench.judge(None, 5.0) == (None, None)
    assert bench.judge(5.0, None) == (None, None)


def test_the_table_holds_the_medians_of_each_size_and_variant() -> None:
    runs = [{"services": 6, "variant": "versions-only", "wall": w} for w in (4.0, 5.0, 9.0)]
    runs += [{"services": 6, "variant": "drift", "wall": w} for w in (6.0, 7.0)]
    runs += [{"services": 12, "variant": "drift", "wall": 12.0}]
    medians = bench.median_walls(runs)
    assert medians == {6: {"versions-only": 5.0, "drift": 6.5}, 12: {"versions-only": None, "drift": 12.0}}
    lines = bench.table(medians).splitlines()
    assert lines[0] == "| services | versions-only | drift | ratio | target | met |"
    assert lines[2] == "| 6 | 5.0 s | 6.5 s | 1.30 | <= 2x and < 10 s | met |"
    assert lines[3] == "| 12 | - | 12.0 s | - | <= 2x and < 10 s | - |"


def test_the_cases_rotate_over_every_size_and_variant() -> None:
    cases = bench.cases([6, 12])
    assert cases == [(6, "versions-only"), (6, "drift"), (12, "versions-only"), (12, "drift")]
    assert bench.rotated(cases, 1)[0] == (6, "drift")
    assert bench.VARIANTS["versions-only"] == ["-e", "site_read_releases=false"]
    assert bench.VARIANTS["drift"] == []


def test_a_plan_that_read_the_releases_listed_helms_deployed_records() -> None:
    plan = [(1.0, "GET", "/apis/lifecycle.openstack.org/v1alpha1/servicelifecycles?limit=500")]
    assert not bench.reads_releases(plan)
    # the UpdateStatus lists every Helm record, not the deployed ones the plan reads
    assert not bench.reads_releases(plan + [(2.0, "GET", "/api/v1/secrets?labelSelector=owner%3Dhelm&limit=500")])
    assert bench.reads_releases(plan + [(2.0, "GET", "/api/v1/secrets?labelSelector=owner%3Dhelm%2Cstatus%3Ddeployed"
                                                     "&limit=500")])
    assert bench.reads_releases([(2.0, "GET", "/api/v1/namespaces/a/configmaps?labelSelector=owner%3Dhelm%2C"
                                              "status%3Ddeployed")])


def _speed():
    spec = importlib.util.spec_from_file_location("bench_speed", ROOT / "bench" / "speed.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_make_bench_runs_the_no_op_site_and_judges_it_against_the_target() -> None:
    speed = _speed()
    assert "site-noop" in speed.ITEMS and set(speed.ITEMS) == set(speed.CLASSES)
    b = SimpleNamespace(args=SimpleNamespace(quick=False, prefix="speed"), anchors=["abc123"])
    item = speed.CLASSES["site-noop"](b)
    assert item.sizes == (6, 12)
    assert sorted(item.todo) == sorted([(speed.THIS_TREE, n, v) for n in (6, 12) for v in ("versions-only", "drift")]
                                       + [("abc123", 6, "drift"), ("abc123", 12, "drift")])
    item.runs = [{"tree": speed.THIS_TREE, "services": 6, "variant": "versions-only", "wall": 3.4},
                 {"tree": speed.THIS_TREE, "services": 6, "variant": "drift", "wall": 4.1},
                 {"tree": speed.THIS_TREE, "services": 12, "variant": "versions-only", "wall": 4.0},
                 {"tree": speed.THIS_TREE, "services": 12, "variant": "drift", "wall": 10.5},
                 {"tree": "abc123", "services": 12, "variant": "drift", "wall": 3.9}]
    six, twelve = item.rows()
    assert (six.lcm, six.baseline, six.met) == ("4.10 s", "-e site_read_releases=false: 3.40 s", True)
    assert six.ratio == pytest.approx(4.1 / 3.4)
    assert (twelve.lcm, twelve.met, twelve.anchors) == ("10.50 s", False, {"abc123": "3.90 s"})
    assert six.anchors == {"abc123": "-"}
    assert speed.CLASSES["site-noop"](SimpleNamespace(args=SimpleNamespace(quick=True), anchors=[])).sizes == (6,)
