package main

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/tools/cache"
)

func ptr[T any](v T) *T { return &v }

// A pod shaped as nova-compute with Ceph on: a Secret and a ConfigMap of
// its own release, the Ceph ones nobody made, an optional one, the service
// account token's projected volume, and volumes that mount no object.
func cephPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "nova-compute-x", Namespace: "ns"},
		Spec: corev1.PodSpec{Volumes: []corev1.Volume{
			{Name: "nova-etc", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "nova-etc"}}},
			{Name: "nova-bin", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "nova-bin"}}}},
			{Name: "ceph-keyring", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "pvc-ceph-client-key"}}},
			{Name: "etcceph", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "ceph-etc"}}}},
			{Name: "maybe", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: "nobody", Optional: ptr(true)}}},
			{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}}},
					{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}, Optional: ptr(true)}},
				}}}},
			{Name: "varlibnova", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/nova"}}},
			{Name: "pod-tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		}},
	}
}

func TestMountedObjectsAreTheRequiredSecretsAndConfigMaps(t *testing.T) {
	got := mountedObjects(cephPod())
	want := []mountedObject{
		{Volume: "nova-etc", Kind: "secret", Name: "nova-etc"},
		{Volume: "nova-bin", Kind: "configmap", Name: "nova-bin"},
		{Volume: "ceph-keyring", Kind: "secret", Name: "pvc-ceph-client-key"},
		{Volume: "etcceph", Kind: "configmap", Name: "ceph-etc"},
		{Volume: "kube-api-access", Kind: "configmap", Name: "kube-root-ca.crt"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("mountedObjects:\n got %v\nwant %v", got, want)
	}
}

func partial(resource, name string) *metav1.PartialObjectMetadata {
	kind := map[string]string{"secrets": "Secret", "configmaps": "ConfigMap"}[resource]
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: kind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
	}
}

func lister(resource string, names ...string) cache.GenericLister {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, name := range names {
		_ = indexer.Add(partial(resource, name))
	}
	return cache.NewGenericLister(indexer, secretsResource.GroupResource())
}

// The caches know the release's own objects; kube-root-ca.crt exists but the
// cache has not seen it yet (read live); the Ceph objects exist nowhere.
func TestMissingIsWhatNeitherTheCacheNorALiveReadFinds(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	client := metadatafake.NewSimpleMetadataClient(scheme, partial("configmaps", "kube-root-ca.crt"))
	mounts := &Mounts{client: client, secrets: lister("secrets", "nova-etc"), configMaps: lister("configmaps", "nova-bin")}

	missing, err := mounts.Missing(context.Background(), cephPod())
	if err != nil {
		t.Fatal(err)
	}
	want := []mountedObject{
		{Volume: "ceph-keyring", Kind: "secret", Name: "pvc-ceph-client-key"},
		{Volume: "etcceph", Kind: "configmap", Name: "ceph-etc"},
	}
	if !reflect.DeepEqual(missing, want) {
		t.Fatalf("Missing:\n got %v\nwant %v", missing, want)
	}
	if got, want := describeMissing(missing), "configmap ceph-etc (volume etcceph); secret pvc-ceph-client-key (volume ceph-keyring)"; got != want {
		t.Errorf("describeMissing = %q, want %q", got, want)
	}
	if got, want := missing[0].FailedMount(), `MountVolume.SetUp failed for volume "ceph-keyring" : secret "pvc-ceph-client-key" not found`; got != want {
		t.Errorf("FailedMount = %q, want %q", got, want)
	}
}
