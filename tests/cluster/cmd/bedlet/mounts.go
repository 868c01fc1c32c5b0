package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
)

// A kubelet mounts a pod's volumes before it starts anything of the pod: a
// pod whose Secret or ConfigMap volume names an object that does not exist
// stays Pending, with FailedMount warnings, until the object appears. Stock
// openstack-helm charts show it whenever a value asks for an object no
// release of the cluster makes: nova and libvirt with conf.ceph.enabled (the
// chart default) mount the ceph-etc ConfigMap and the pvc-ceph-client-key
// Secret that a Ceph deployment provides. bedlet admits such a pod only once
// every object its volumes need exists (admit.go), so a deployment that would
// hang on a real cluster hangs on the bed too.
//
// Only whether the object exists is played: a missing key of an existing
// object (a volume's items) and a container's env references to a missing
// object (CreateContainerConfigError) are not.
const annotationMissingVolumes = "bed.lcm.openstack.org/missing-volumes"

var (
	secretsResource    = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	configMapsResource = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// mountedObject is one object a volume of the pod needs.
type mountedObject struct {
	Volume string // the pod's volume
	Kind   string // "secret" or "configmap", as the kubelet words it
	Name   string
}

// String is what the missing-volumes annotation lists.
func (o mountedObject) String() string {
	return fmt.Sprintf("%s %s (volume %s)", o.Kind, o.Name, o.Volume)
}

// FailedMount is the kubelet's message for the volume.
func (o mountedObject) FailedMount() string {
	return fmt.Sprintf("MountVolume.SetUp failed for volume %q : %s %q not found", o.Volume, o.Kind, o.Name)
}

// mountedObjects lists the Secrets and ConfigMaps the pod's volumes must
// find, directly or as projected sources; those marked optional need not
// exist.
func mountedObjects(pod *corev1.Pod) []mountedObject {
	var objs []mountedObject
	add := func(volume, kind, name string, optional *bool) {
		if name != "" && (optional == nil || !*optional) {
			objs = append(objs, mountedObject{Volume: volume, Kind: kind, Name: name})
		}
	}
	for _, v := range pod.Spec.Volumes {
		if s := v.Secret; s != nil {
			add(v.Name, "secret", s.SecretName, s.Optional)
		}
		if c := v.ConfigMap; c != nil {
			add(v.Name, "configmap", c.Name, c.Optional)
		}
		if p := v.Projected; p != nil {
			for _, src := range p.Sources {
				if s := src.Secret; s != nil {
					add(v.Name, "secret", s.Name, s.Optional)
				}
				if c := src.ConfigMap; c != nil {
					add(v.Name, "configmap", c.Name, c.Optional)
				}
			}
		}
	}
	return objs
}

// Mounts finds the objects a pod's volumes need that do not exist.
//
// It holds only the objects' metadata (no Secret's data ever reaches
// bedlet). The caches answer first; an object they lack is read live before
// it is called missing, because caches of different kinds are not ordered
// with each other: a pod can reach bedlet before the Secret created just
// before it.
type Mounts struct {
	client     metadata.Interface
	secrets    cache.GenericLister
	configMaps cache.GenericLister
}

// Missing lists the pod's mounted objects that do not exist.
func (m *Mounts) Missing(ctx context.Context, pod *corev1.Pod) ([]mountedObject, error) {
	var missing []mountedObject
	for _, obj := range mountedObjects(pod) {
		exists, err := m.exists(ctx, pod.Namespace, obj)
		if err != nil {
			return nil, err
		}
		if !exists {
			missing = append(missing, obj)
		}
	}
	return missing, nil
}

func (m *Mounts) exists(ctx context.Context, namespace string, obj mountedObject) (bool, error) {
	lister, resource := m.secrets, secretsResource
	if obj.Kind == "configmap" {
		lister, resource = m.configMaps, configMapsResource
	}
	if _, err := lister.ByNamespace(namespace).Get(obj.Name); err == nil {
		return true, nil
	}
	_, err := m.client.Resource(resource).Namespace(namespace).Get(ctx, obj.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %s %s: %w", obj.Kind, obj.Name, err)
	}
	return true, nil
}

// describeMissing is the annotation's value: sorted, so an unchanged set
// writes nothing.
func describeMissing(missing []mountedObject) string {
	parts := make([]string, 0, len(missing))
	for _, obj := range missing {
		parts = append(parts, obj.String())
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}
