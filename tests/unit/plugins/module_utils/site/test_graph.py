"""plugins/module_utils/site/graph.py: cycles found and named, levels,
dependents and the critical path of a site's graph."""

from __future__ import annotations

from typing import Dict, List

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.site import graph
from support.paths import UNIT_FIXTURES

OPENSTACK_HELM = {"mariadb": [], "memcached": [], "rabbitmq": [],
                  "keystone": ["mariadb", "memcached", "rabbitmq"], "placement": ["keystone", "mariadb"]}
THIRTY = yaml.safe_load((UNIT_FIXTURES / "site" / "thirty.yaml").read_text())
THIRTY_EDGES = {s["service"]: list(s.get("depends_on") or []) for s in THIRTY}
THIRTY_WEIGHTS = {s["service"]: s.get("expected_duration", 60) for s in THIRTY}


def test_the_openstack_helm_site_has_three_levels() -> None:
    assert graph.levels(OPENSTACK_HELM) == {"mariadb": 0, "memcached": 0, "rabbitmq": 0, "keystone": 1, "placement": 2}


def test_a_level_is_one_above_the_highest_dependency_not_the_first() -> None:
    edges = {"a": [], "b": ["a"], "c": ["b"], "d": ["a", "c"]}
    assert graph.levels(edges) == {"a": 0, "b": 1, "c": 2, "d": 3}


def test_thirty_services_four_levels_deep() -> None:
    assert len(THIRTY) == 30
    found = graph.levels(THIRTY_EDGES)
    assert found == {s["service"]: s["level"] for s in THIRTY}
    assert max(found.values()) == 4


def test_the_order_puts_each_node_after_its_dependencies_whatever_the_input_order() -> None:
    shuffled = dict(reversed(list(THIRTY_EDGES.items())))
    order = graph.order(shuffled)
    assert sorted(order) == sorted(THIRTY_EDGES)
    assert all(order.index(dep) < order.index(node) for node, deps in THIRTY_EDGES.items() for dep in deps)
    assert graph.order(shuffled) == graph.order(THIRTY_EDGES)  # deterministic


def test_the_order_refuses_a_cycle() -> None:
    with pytest.raises(ValueError, match="cycle"):
        graph.order({"a": ["b"], "b": ["a"]})


def test_dependents_are_the_reverse_edges() -> None:
    assert graph.dependents(OPENSTACK_HELM) == {"mariadb": ["keystone", "placement"], "memcached": ["keystone"],
                                                "rabbitmq": ["keystone"], "keystone": ["placement"], "placement": []}


@pytest.mark.parametrize("edges, cycle", [
    ({"a": ["a"]}, ["a", "a"]),
    ({"a": ["b"], "b": ["a"]}, ["a", "b", "a"]),
    ({"c": ["a"], "a": ["b"], "b": ["c"]}, ["a", "b", "c", "a"]),
    # entered from x, which is not on it: the cycle alone is named, from its smallest node
    ({"x": ["q"], "q": ["r"], "r": ["p"], "p": ["q"]}, ["p", "q", "r", "p"]),
    # a diamond is no cycle; the cycle is further on
    ({"a": ["b", "c"], "b": ["d"], "c": ["d"], "d": ["e"], "e": ["f"], "f": ["d"]}, ["d", "e", "f", "d"]),
])
def test_a_cycle_is_found_and_named_as_the_chain_that_closes(edges: Dict[str, List[str]], cycle: List[str]) -> None:
    assert graph.find_cycle(edges) == cycle


def test_no_cycle_in_a_dag_however_many_paths_meet() -> None:
    assert graph.find_cycle(OPENSTACK_HELM) == [] and graph.find_cycle(THIRTY_EDGES) == []
    assert graph.find_cycle({}) == []


def test_a_deep_chain_needs_no_recursion() -> None:
    chain = {i: [i - 1] if i else [] for i in range(5000)}
    assert graph.levels(chain)[4999] == 4999
    assert graph.find_cycle({**chain, 0: [4999]})[:3] == [0, 4999, 4998]


def test_the_critical_path_is_the_heaviest_chain_dependency_first() -> None:
    weights = {"mariadb": 120, "memcached": 60, "rabbitmq": 90, "keystone": 300, "placement": 180}
    assert graph.critical_path(OPENSTACK_HELM, weights) == (["mariadb", "keystone", "placement"], 600)


def test_the_weights_not_the_length_make_the_critical_path() -> None:
    edges = {"a": [], "b": ["a"], "c": ["b"], "heavy": []}
    assert graph.critical_path(edges, {"a": 10, "b": 10, "c": 10, "heavy": 31}) == (["heavy"], 31)
    assert graph.critical_path(edges, {"a": 10, "b": 10, "c": 11, "heavy": 31}) == (["a", "b", "c"], 31)


def test_the_critical_path_of_thirty_services() -> None:
    assert graph.critical_path(THIRTY_EDGES, THIRTY_WEIGHTS) == (["ceph-mon", "ceph-osd", "glance", "nova", "octavia"], 1640)
    # with ceph at rest (weighing nothing), the keystone chain is the longest
    at_rest = dict(THIRTY_WEIGHTS, **{"ceph-mon": 0, "ceph-osd": 0})
    assert graph.critical_path(THIRTY_EDGES, at_rest) == (["mariadb", "keystone", "glance", "nova", "octavia"], 1260)


def test_nodes_that_weigh_nothing_are_trimmed_at_the_ends_and_kept_inside() -> None:
    edges = {"db": [], "api": ["db"], "mid": ["api"], "top": ["mid"], "leaf": ["top"]}
    weights = {"db": 0, "api": 100, "mid": 0, "top": 50, "leaf": 0}
    assert graph.critical_path(edges, weights) == (["api", "mid", "top"], 150)


def test_nothing_to_do_is_an_empty_critical_path() -> None:
    assert graph.critical_path(OPENSTACK_HELM, {}) == ([], 0)
    assert graph.critical_path({}, {}) == ([], 0)
