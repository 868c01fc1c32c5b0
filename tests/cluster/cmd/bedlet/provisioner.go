package main

import (
	"context"
	"log"
	"path"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// The external provisioner the bed's StorageClasses name. The real PV
// controller hands a claim to it by annotating the claim; this provisioner
// creates a volume for it, and the PV controller binds the two.
const (
	provisionerName       = "bed.lcm.openstack.org/hostpath"
	annStorageProvisioner = "volume.kubernetes.io/storage-provisioner"
	annBetaProvisioner    = "volume.beta.kubernetes.io/storage-provisioner"
	annProvisionedBy      = "pv.kubernetes.io/provisioned-by"
	volumeRoot            = "/var/lib/lcm-openstack-bed/volumes"
)

var metav1PatchOptions = metav1.PatchOptions{FieldManager: "bedlet"}

// Provisioner creates a PersistentVolume for each claim handed to it, and
// deletes a released volume whose reclaim policy is Delete, as an external
// provisioner does. No data is ever written: kwok runs no container.
type Provisioner struct {
	client  kubernetes.Interface
	claims  corelisters.PersistentVolumeClaimLister
	volumes corelisters.PersistentVolumeLister
	classes storagelisters.StorageClassLister
	queue   workqueue.TypedRateLimitingInterface[string]
}

func NewProvisioner(client kubernetes.Interface, claims corelisters.PersistentVolumeClaimLister,
	volumes corelisters.PersistentVolumeLister, classes storagelisters.StorageClassLister) *Provisioner {
	return &Provisioner{client: client, claims: claims, volumes: volumes, classes: classes,
		queue: newQueue[string]()}
}

// Keys are "claim/<ns>/<name>" and "volume/<name>".
func (p *Provisioner) ClaimHandler() cache.ResourceEventHandler {
	return p.handler("claim/")
}

func (p *Provisioner) VolumeHandler() cache.ResourceEventHandler {
	return p.handler("volume/")
}

func (p *Provisioner) handler(prefix string) cache.ResourceEventHandler {
	return onAddOrUpdate(func(obj interface{}) {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			p.queue.Add(prefix + key)
		}
	})
}

func (p *Provisioner) Run(ctx context.Context) {
	runQueue(ctx, "provisioner", p.queue, p.sync)
}

// sync is a claim's ("claim/<key>") or a volume's ("volume/<key>").
func (p *Provisioner) sync(ctx context.Context, key string) error {
	if len(key) > 7 && key[:7] == "volume/" {
		return p.syncVolume(ctx, key[7:])
	}
	return p.syncClaim(ctx, key[6:])
}

func (p *Provisioner) syncClaim(ctx context.Context, key string) error {
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	claim, err := p.claims.PersistentVolumeClaims(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	handedToUs := claim.Annotations[annStorageProvisioner] == provisionerName ||
		claim.Annotations[annBetaProvisioner] == provisionerName
	if !handedToUs || claim.Spec.VolumeName != "" || claim.DeletionTimestamp != nil ||
		claim.Spec.StorageClassName == nil || claim.Status.Phase != corev1.ClaimPending {
		return nil
	}
	class, err := p.classes.Get(*claim.Spec.StorageClassName)
	if err != nil {
		return err
	}
	pvName := "pvc-" + string(claim.UID)
	if _, err := p.volumes.Get(pvName); err == nil {
		return nil
	}
	reclaim := corev1.PersistentVolumeReclaimDelete
	if class.ReclaimPolicy != nil {
		reclaim = *class.ReclaimPolicy
	}
	dirOrCreate := corev1.HostPathDirectoryOrCreate
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        pvName,
			Annotations: map[string]string{annProvisionedBy: provisionerName},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: claim.Spec.Resources.Requests[corev1.ResourceStorage]},
			AccessModes:                   claim.Spec.AccessModes,
			VolumeMode:                    claim.Spec.VolumeMode,
			StorageClassName:              class.Name,
			PersistentVolumeReclaimPolicy: reclaim,
			ClaimRef: &corev1.ObjectReference{
				APIVersion: "v1", Kind: "PersistentVolumeClaim",
				Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID,
			},
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: path.Join(volumeRoot, pvName), Type: &dirOrCreate},
			},
		},
	}
	_, err = p.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{FieldManager: "bedlet"})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err == nil {
		log.Printf("provisioner: created %s for claim %s", pvName, key)
	}
	return err
}

// syncVolume deletes our released volumes whose policy says so; the PV
// controller leaves that to the provisioner that made them.
func (p *Provisioner) syncVolume(ctx context.Context, name string) error {
	pv, err := p.volumes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if pv.Annotations[annProvisionedBy] != provisionerName || pv.DeletionTimestamp != nil ||
		pv.Status.Phase != corev1.VolumeReleased ||
		pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
		return nil
	}
	err = p.client.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		log.Printf("provisioner: deleted released %s", name)
	}
	return err
}
