"""bench/speed_report.py, the speed bench's arithmetic: the Job run times that sweep a completion
across a poller's cycle, where a completion fell in it, the issue's targets judged, and the table;
and bench/requests_log.py, the requests a run notes client-side."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


report = _load("speed_report")
requests_log = _load("requests_log")


def test_the_sweep_moves_the_completion_across_one_whole_cycle_evenly() -> None:
    assert report.sweep(5, report.FRACTIONS, base=2.0) == {0.0: 2000, 0.25: 3250, 0.5: 4500, 0.75: 5750}
    assert report.sweep(1, report.FRACTIONS, base=2.0) == {0.0: 2000, 0.25: 2250, 0.5: 2500, 0.75: 2750}
    steps = sorted(report.sweep(5, report.FRACTIONS, base=2.0).values())
    assert {b - a for a, b in zip(steps, steps[1:])} == {1250}
    assert max(steps) - min(steps) < 5000  # within one cycle: no point measured twice


def test_a_sweep_needs_a_cycle() -> None:
    with pytest.raises(ValueError):
        report.sweep(0, report.FRACTIONS, base=2.0)


def test_the_position_in_the_cycle_counts_from_the_last_poll_before_the_completion() -> None:
    polls = [100.0, 105.02, 110.05, 115.07]
    assert report.cycle_position(polls, 107.52, 5) == pytest.approx(0.5)
    assert report.cycle_position(polls, 110.05, 5) == pytest.approx(0.0)
    assert report.cycle_position(polls, 120.0, 5) == pytest.approx(0.986)
    assert report.cycle_position(polls, 99.0, 5) is None
    assert report.cycle_position([], 99.0, 1) is None


def test_ratios_and_upper_bounds_judge_nothing_without_a_number() -> None:
    assert report.ratio(1.2, 1.0) == pytest.approx(1.2)
    assert report.ratio(None, 1.0) is None and report.ratio(1.0, 0.0) is None and report.ratio(1.0, None) is None
    assert report.at_most(1.2, 1.2) is True
    assert report.at_most(1.21, 1.2) is False
    assert report.at_most(None, 1.2) is None
    assert report.median([3.0, None, 1.0, 2.0]) == 2.0
    assert report.median([None]) is None


def test_a_constant_series_is_met_and_one_that_grows_is_not() -> None:
    assert report.constant([9, 9, 9]) is True
    assert report.constant([9, 9, 10]) is False
    assert report.constant([9, 10], slack=1) is True
    assert report.constant([9]) is None


def test_growth_tells_proportional_from_faster() -> None:
    sizes = {10: 10.0, 50: 50.0, 200: 200.0}
    assert report.growth({10: 9.0, 50: 42.0, 200: 154.0}, sizes) == pytest.approx((154 / 200) / (9 / 10))
    assert report.growth({10: 24.0, 50: 140.0, 200: 2400.0}, sizes) == pytest.approx(5.0)
    flat = {10: 1.0, 50: 1.0, 200: 1.0}
    assert report.growth({10: 760.0, 50: 850.0, 200: 900.0}, flat) == pytest.approx(900 / 760)
    assert report.growth({10: 9.0}, sizes) is None
    assert report.growth({10: 0.0, 200: 5.0}, sizes) is None


def test_the_table_has_a_column_per_anchor_and_says_which_targets_are_not_met() -> None:
    rows = [
        report.Row(item="no-op call", case="phase vs k8s", lcm="1.40 s", baseline="k8s: 1.30 s",
                   ratio=1.4 / 1.3, target="<= 1.20", met=True, anchors={"103271d": "2.00 s"}),
        report.Row(item="Helm 3", case="install | upgrade", lcm="1.90 s", baseline="helm: 0.40 s",
                   ratio=4.75, target="<= 1.20", met=False),
        report.Row(item="phase of N Jobs", case="10 Jobs", lcm="71 requests"),
    ]
    lines = report.table(rows, ["103271d"]).splitlines()
    assert lines[0] == "| item | case | lcm.openstack | at 103271d | baseline | ratio | target | met |"
    assert lines[1] == "|---|---|---|---|---|---|---|---|"
    assert lines[2] == "| no-op call | phase vs k8s | 1.40 s | 2.00 s | k8s: 1.30 s | 1.08 | <= 1.20 | met |"
    assert lines[3] == "| Helm 3 | install \\| upgrade | 1.90 s |  | helm: 0.40 s | 4.75 | <= 1.20 | **not met** |"
    assert lines[4] == "| phase of N Jobs | 10 Jobs | 71 requests |  |  |  |  |  |"
    assert report.summary(rows) == (1, 2)
    assert rows[0].as_dict()["anchors"] == {"103271d": "2.00 s"}


def test_without_an_anchor_the_table_has_no_anchor_column() -> None:
    lines = report.table([report.Row(item="a", case="b", lcm="c")], []).splitlines()
    assert lines[0] == "| item | case | lcm.openstack | baseline | ratio | target | met |"
    assert report.seconds(None) == "-" and report.seconds(1.234) == "1.23 s"


def test_requests_are_told_apart_as_the_apiserver_counts_them() -> None:
    base = "https://127.0.0.1:6443"
    assert report.request_kind("GET", f"{base}/apis/batch/v1/namespaces/a/jobs/j") == "GET jobs"
    assert report.request_kind("GET", f"{base}/apis/batch/v1/namespaces/a/jobs?labelSelector=x") == "LIST jobs"
    assert report.request_kind("GET", f"{base}/api/v1/namespaces/a/pods?resourceVersion=5&watch=true") == "WATCH pods"
    assert report.request_kind(
        "PATCH", f"{base}/apis/lifecycle.openstack.org/v1alpha1/namespaces/a/phases/p/status") == "PATCH phases/status"
    assert report.request_kind("GET", f"{base}/apis/lifecycle.openstack.org/v1alpha1/updatestatuses/cluster") == \
        "GET updatestatuses"
    assert report.request_kind("GET", f"{base}/api/v1/secrets?labelSelector=owner%3Dhelm&limit=500") == "LIST secrets"
    assert report.request_kind("POST", f"{base}/api/v1/namespaces") == "POST namespaces"
    sent = [(1.0, "GET", f"{base}/apis/batch/v1/namespaces/a/jobs/j"), (2.0, "GET", f"{base}/apis/batch/v1/namespaces/a/jobs/j"),
            (2.5, "PUT", f"{base}/apis/coordination.k8s.io/v1/namespaces/a/leases/l"), (9.0, "GET", f"{base}/api/v1/pods")]
    assert report.by_kind(sent, 1.5, 3.0) == {"GET jobs": 1, "PUT leases": 1}
    assert report.by_kind(sent, 0.0, 10.0) == {"GET jobs": 2, "LIST pods": 1, "PUT leases": 1}


def test_the_requests_a_run_notes_are_read_back_in_the_order_they_were_sent(tmp_path) -> None:
    env = requests_log.hooked(tmp_path, tmp_path / "run.log")
    hook = Path(env["PYTHONPATH"].split(":")[0]) / "sitecustomize.py"
    assert hook.read_text() == requests_log.HOOK
    assert env["BENCH_REQUESTS_LOG"] == str(tmp_path / "run.log")
    (tmp_path / "run.log").write_text("12.5 GET https://127.0.0.1:6443/apis/batch/v1/namespaces/a/jobs/j?x=1 2\n"
                                      "10.25 POST /apis/batch/v1/namespaces/a/jobs\n")
    assert requests_log.noted(tmp_path / "run.log") == [
        (10.25, "POST", "/apis/batch/v1/namespaces/a/jobs"),
        (12.5, "GET", "https://127.0.0.1:6443/apis/batch/v1/namespaces/a/jobs/j?x=1 2")]
    assert requests_log.noted(tmp_path / "none.log") == []


def test_the_hook_notes_each_request_a_process_sends(tmp_path, monkeypatch) -> None:
    """The sitecustomize, run as Python would at start-up, wraps urllib3's pool."""
    import urllib3.connectionpool as pool

    sent = []
    monkeypatch.setattr(pool.HTTPConnectionPool, "urlopen", lambda self, method, url, *a, **k: sent.append(url) or "r")
    monkeypatch.setenv("BENCH_REQUESTS_LOG", str(tmp_path / "run.log"))
    exec(compile(requests_log.HOOK, "sitecustomize", "exec"), {})  # noqa: S102 - the hook's own text
    assert pool.HTTPConnectionPool("127.0.0.1").urlopen("GET", "/api/v1/pods") == "r"
    ((when, method, url),) = requests_log.noted(tmp_path / "run.log")
    assert (method, url) == ("GET", "/api/v1/pods") and when > 0 and sent == ["/api/v1/pods"]
