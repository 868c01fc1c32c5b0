# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ConfigMaps and Secrets a pod cannot start without.

A kubelet does not start a pod's containers while a volume's ConfigMap or
Secret is missing (the pod stays ContainerCreating, event FailedMount), nor a
container whose env or envFrom names a missing one (CreateContainerConfigError),
unless the reference says `optional: true`. Read from a rendered object's pod
template, so a site can tell, before anything is applied, what its pods will
wait for forever (cinder's volume and nova's compute mount the Ceph client's
`ceph-etc` where no Ceph is deployed).
"""

from __future__ import annotations

from typing import Any, List, Mapping, Set, Tuple

Ref = Tuple[str, str, str]  # (kind, name, how: "volume <v>" or "env of container <c>")
RBAC_RESOURCE = {"ConfigMap": "configmaps", "Secret": "secrets"}


def _pod_spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec") or {}
    if obj.get("kind") == "Pod":
        return spec
    if obj.get("kind") == "CronJob":
        spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    return (spec.get("template") or {}).get("spec") or {}


def required(obj: Mapping[str, Any]) -> List[Ref]:
    """(kind, name, how) of each ConfigMap and Secret the pods need to start, each once."""
    spec = _pod_spec(obj)
    found: List[Ref] = []
    seen: Set[Tuple[str, str]] = set()

    def add(kind: str, ref: Mapping[str, Any], name_key: str, how: str) -> None:
        name = str(ref.get(name_key) or "")
        if name and not ref.get("optional") and (kind, name) not in seen:
            seen.add((kind, name))
            found.append((kind, name, how))

    for vol in spec.get("volumes") or []:
        how = f"volume {vol.get('name')}"
        if vol.get("secret"):
            add("Secret", vol["secret"], "secretName", how)
        if vol.get("configMap"):
            add("ConfigMap", vol["configMap"], "name", how)
        for src in (vol.get("projected") or {}).get("sources") or []:
            if src.get("secret"):
                add("Secret", src["secret"], "name", how)
            if src.get("configMap"):
                add("ConfigMap", src["configMap"], "name", how)
    for container in list(spec.get("initContainers") or []) + list(spec.get("containers") or []):
        how = f"env of container {container.get('name')}"
        for env in container.get("env") or []:
            ref = env.get("valueFrom") or {}
            if ref.get("secretKeyRef"):
                add("Secret", ref["secretKeyRef"], "name", how)
            if ref.get("configMapKeyRef"):
                add("ConfigMap", ref["configMapKeyRef"], "name", how)
        for env_from in container.get("envFrom") or []:
            if env_from.get("secretRef"):
                add("Secret", env_from["secretRef"], "name", how)
            if env_from.get("configMapRef"):
                add("ConfigMap", env_from["configMapRef"], "name", how)
    return found


def creatable(objects: List[Mapping[str, Any]]) -> Set[str]:
    """The kinds (ConfigMap, Secret) a Role of `objects` lets its pods create at
    run time (keystone's fernet-setup its keys, cinder's storage-init its
    keyring): such an object need not be rendered to exist when the pods start."""
    out: Set[str] = set()
    for obj in objects:
        if obj.get("kind") != "Role":
            continue
        for rule in obj.get("rules") or []:
            verbs, resources = set(rule.get("verbs") or []), set(rule.get("resources") or [])
            if verbs & {"create", "*"}:
                out |= {kind for kind, plural in RBAC_RESOURCE.items() if plural in resources or "*" in resources}
    return out
