"""bench/site.py, the whole-site bench's pure parts: the synthetic site and its inventory, the
critical path from ServiceLifecycle records, and the apiserver's request counters."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.site.graph import find_cycle
from ansible_collections.lcm.openstack.plugins.module_utils.site.model import parse_site

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_site", ROOT / "bench" / "site.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_thirty_services_in_four_levels_each_depending_on_the_level_before() -> None:
    site = bench.make_site(30, 4, seed=7)
    assert len(site) == 30
    assert bench.level_sizes(30, 4) == [7, 7, 8, 8]
    assert [sum(1 for s in site.values() if s["level"] == level) for level in range(4)] == [7, 7, 8, 8]
    for name, svc in site.items():
        if svc["level"] == 0:
            assert svc["depends_on"] == []
        else:
            assert 1 <= len(svc["depends_on"]) <= 3
            assert {site[d]["level"] for d in svc["depends_on"]} == {svc["level"] - 1}, name
    assert find_cycle({n: s["depends_on"] for n, s in site.items()}) == []
    # The longest chain has four services, one a level.
    chain = bench.critical_path({n: s["depends_on"] for n, s in site.items()}, {n: 1.0 for n in site})[1]
    assert [site[n]["level"] for n in chain] == [0, 1, 2, 3]
    assert bench.make_site(30, 4, seed=7) == site


def test_too_few_services_for_the_levels_is_refused() -> None:
    with pytest.raises(SystemExit):
        bench.level_sizes(3, 4)


def test_the_inventory_is_a_site_the_planner_takes(tmp_path: Path) -> None:
    site = bench.make_site(8, 3, seed=1)
    hosts = bench.host_vars(site, "stb-1", lambda level: bench.job_seconds(level, 20, 5, slow=3.0))
    assert hosts["s00"]["openstack_namespace"] == "stb-1-s00"
    assert hosts["s00"]["values"]["simulate"]["duration"] == {"db_init": "3s", "db_sync": "60s", "bootstrap": "3s",
                                                              "rally_test": "15s"}
    assert hosts["s00"]["expected_duration"] == 81
    assert hosts["s07"]["expected_duration"] == 27
    assert all(d == f"stb-1-{d.split('/')[1]}/{d.split('/')[1]}" for h in hosts.values() for d in h["depends_on"])
    parsed = parse_site([dict(service=n, namespace=h["openstack_namespace"], version="2025.1",
                              depends_on=h["depends_on"]) for n, h in hosts.items()])
    assert len(parsed.services) == 8

    half = {h: hosts[h] for h in list(hosts)[::2]}
    directory = bench.write_inventory(tmp_path / "slice0", "stb-1", half)
    inventory = yaml.safe_load((directory / "inventory.yml").read_text())
    assert list(inventory["all"]["children"]["openstack_services"]["hosts"]) == ["s00", "s02", "s04", "s06"]
    assert sorted(p.stem for p in (directory / "host_vars").iterdir()) == ["s00", "s02", "s04", "s06"]
    group = yaml.safe_load((directory / "group_vars" / "openstack_services.yml").read_text())
    assert group["site_name"] == "stb-1" and group["traffic_target"] == "keystone-api"
    assert yaml.safe_load((directory / "host_vars" / "s02.yml").read_text()) == hosts["s02"]


def record(service: str, created: str, started: str, completed: str, ready: str = "") -> dict:
    conditions = [{"type": "DependenciesReady", "status": "True", "lastTransitionTime": ready}] if ready else []
    return {"metadata": {"name": service, "creationTimestamp": created}, "spec": {"service": service},
            "status": {"conditions": conditions,
                       "flow": {"startedAt": started, "completedAt": completed, "state": "Succeeded"}}}


def test_the_critical_path_from_the_records_leaves_the_waits_out() -> None:
    records = [
        record("a", "2026-11-26T10:00:00Z", "2026-11-26T10:00:01Z", "2026-11-26T10:00:31Z", "2026-11-26T10:00:01Z"),
        record("b", "2026-11-26T10:00:00Z", "2026-11-26T10:00:01Z", "2026-11-26T10:00:11Z"),
        # waited from 10:00:00 until a was done (10:00:31), then worked 40 s
        record("c", "2026-11-26T10:00:00Z", "2026-11-26T10:00:32Z", "2026-11-26T10:01:12Z", "2026-11-26T10:00:32Z"),
        # its DependenciesReady came after the flow's start: the work starts there
        record("d", "2026-11-26T10:00:00Z", "2026-11-26T10:00:05Z", "2026-11-26T10:00:30Z", "2026-11-26T10:00:12Z"),
    ]
    times = bench.flow_times(records)
    assert {n: t["work"] for n, t in times.items()} == {"a": 30.0, "b": 10.0, "c": 40.0, "d": 18.0}
    assert times["c"]["waited"] == 32.0 and times["a"]["waited"] == 1.0
    deps = {"a": [], "b": [], "c": ["a"], "d": ["b"]}
    assert bench.critical_path(deps, {n: t["work"] for n, t in times.items()}) == (70.0, ["a", "c"])
    site = {n: {"level": 1 if deps[n] else 0, "depends_on": deps[n]} for n in deps}
    t0 = bench.stamp("2026-11-26T10:00:00Z")
    level0, level1 = bench.levels(site, times, t0)
    assert (level0["first_start"], level0["last_end"], level0["work"]) == (1.0, 31.0, 20.0)
    assert level1["wake"] == pytest.approx((1.0 + 1.0) / 2)  # c: 32 - 31, d: 12 - 11


def test_a_cycle_has_no_critical_path() -> None:
    with pytest.raises(ValueError, match="a cycle among a, b"):
        bench.critical_path({"a": ["b"], "b": ["a"], "c": []}, {"a": 1.0, "b": 1.0, "c": 1.0})
    assert bench.critical_path({}, {}) == (0.0, [])


METRICS = """\
# HELP apiserver_request_total [STABLE] Counter of apiserver requests
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="lifecycle.openstack.org",\
resource="servicelifecycles",scope="namespace",subresource="",verb="LIST",version="v1alpha1"} %d
apiserver_request_total{code="200",component="apiserver",dry_run="",group="lifecycle.openstack.org",\
resource="servicelifecycles",scope="cluster",subresource="",verb="LIST",version="v1alpha1"} 5
apiserver_request_total{code="200",component="apiserver",dry_run="",group="lifecycle.openstack.org",\
resource="servicelifecycles",scope="namespace",subresource="",verb="WATCH",version="v1alpha1"} %d
apiserver_request_total{code="200",component="apiserver",dry_run="",group="lifecycle.openstack.org",\
resource="servicelifecycles",scope="resource",subresource="",verb="GET",version="v1alpha1"} %d
apiserver_request_total{code="404",component="apiserver",dry_run="",group="lifecycle.openstack.org",\
resource="servicelifecycles",scope="resource",subresource="",verb="GET",version="v1alpha1"} 2
apiserver_request_total{code="200",component="apiserver",dry_run="",group="lifecycle.openstack.org",\
resource="servicelifecycles",scope="resource",subresource="status",verb="GET",version="v1alpha1"} %d
apiserver_request_total{code="200",component="apiserver",dry_run="",group="lifecycle.openstack.org",\
resource="servicelifecycles",scope="resource",subresource="",verb="APPLY",version="v1alpha1"} %d
apiserver_request_total{code="200",component="apiserver",dry_run="",group="lifecycle.openstack.org",\
resource="phases",scope="namespace",subresource="",verb="LIST",version="v1alpha1"} %d
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",\
subresource="",verb="LIST",version="v1"} %d
"""


class Dyn:
    def __init__(self, text: str) -> None:
        self.text = text

    def request(self, method: str, path: str) -> str:
        assert (method, path) == ("GET", "/metrics")
        return self.text


def test_the_lifecycle_reads_are_lists_watches_and_gets_of_servicelifecycles_only() -> None:
    before = bench.metrics(Dyn(METRICS % (10, 3, 20, 7, 4, 100, 1000)))
    after = bench.metrics(Dyn(METRICS % (40, 33, 80, 70, 40, 900, 9000)))
    assert bench.lifecycle_reads(before, after) == {"LIST": 30, "WATCH": 30, "GET": 60}
    assert bench.lifecycle_reads({}, after) == {"LIST": 45, "WATCH": 33, "GET": 82}


def test_a_process_notes_its_reads_of_servicelifecycles_by_verb() -> None:
    base = "/apis/lifecycle.openstack.org/v1alpha1"
    assert bench.request_verb("GET", f"{base}/namespaces/ns/servicelifecycles?fieldSelector=metadata.name%3Da") == "LIST"
    assert bench.request_verb("GET", f"{base}/servicelifecycles?labelSelector=x") == "LIST"
    assert bench.request_verb("GET", f"{base}/namespaces/ns/servicelifecycles?resourceVersion=5&watch=True"
                                     "&timeoutSeconds=55") == "WATCH"
    assert bench.request_verb("GET", f"{base}/namespaces/ns/servicelifecycles/keystone") == "GET"
    assert bench.request_verb("GET", f"{base}/namespaces/ns/servicelifecycles/keystone/status") == ""
    assert bench.request_verb("PATCH", f"{base}/namespaces/ns/servicelifecycles/keystone") == ""
    assert bench.request_verb("GET", f"{base}/namespaces/ns/phases?watch=true") == ""
