"""plugins/module_utils/kube/pod_config.py: what a pod cannot start without, and
what its service's Roles may create at run time."""

from __future__ import annotations

from ansible_collections.lcm.openstack.plugins.module_utils.kube import pod_config

POD = {"kind": "DaemonSet", "spec": {"template": {"spec": {
    "volumes": [{"name": "ceph-etc", "configMap": {"name": "ceph-etc"}},
                {"name": "keyring", "secret": {"secretName": "pvc-ceph-client-key"}},
                {"name": "opt", "secret": {"secretName": "maybe", "optional": True}},
                {"name": "all", "projected": {"sources": [{"secret": {"name": "nova-etc"}},
                                                          {"configMap": {"name": "nova-bin"}}]}},
                {"name": "tmp", "emptyDir": {}}],
    "initContainers": [{"name": "init", "env": [
        {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "nova-db-user", "key": "p"}}},
        {"name": "OPT", "valueFrom": {"configMapKeyRef": {"name": "opt-cm", "key": "k", "optional": True}}}]}],
    "containers": [{"name": "compute", "envFrom": [
        {"secretRef": {"name": "nova-etc"}}, {"configMapRef": {"name": "nova-env"}}]}]}}}}


def test_every_config_object_a_pod_needs_is_named_once_with_how_optional_ones_aside() -> None:
    assert pod_config.required(POD) == [
        ("ConfigMap", "ceph-etc", "volume ceph-etc"), ("Secret", "pvc-ceph-client-key", "volume keyring"),
        ("Secret", "nova-etc", "volume all"), ("ConfigMap", "nova-bin", "volume all"),
        ("Secret", "nova-db-user", "env of container init"), ("ConfigMap", "nova-env", "env of container compute")]
    cron = {"kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": {"spec": {
        "volumes": [{"name": "etc", "secret": {"secretName": "keystone-etc"}}]}}}}}}
    assert pod_config.required(cron) == [("Secret", "keystone-etc", "volume etc")]


def test_what_a_role_lets_the_pods_create() -> None:
    roles = [{"kind": "Role", "rules": [{"resources": ["secrets"], "verbs": ["get", "create"]}]},
             {"kind": "Role", "rules": [{"resources": ["configmaps"], "verbs": ["get"]}]},
             {"kind": "ClusterRole", "rules": [{"resources": ["configmaps"], "verbs": ["create"]}]}]
    assert pod_config.creatable(roles) == {"Secret"}
    assert pod_config.creatable([{"kind": "Role", "rules": [{"resources": ["*"], "verbs": ["*"]}]}]) == {
        "ConfigMap", "Secret"}
