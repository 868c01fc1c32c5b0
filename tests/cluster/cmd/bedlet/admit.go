package main

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
)

// kwok's stages bind no pod before bedlet has admitted it, as a kubelet
// admits a pod before it starts anything. Admission is where the fault of a
// pod without a kubernetes-entrypoint init container is decided: nothing of
// it can run before, so kwok cannot race the decision. A gated pod's fault is
// decided later, when its dependencies are met (Gate.sync). A pod whose
// volumes need a Secret or ConfigMap that does not exist is not admitted
// until it does (mounts.go), as a kubelet starts nothing before it mounted
// them.
const annotationAdmitted = "bed.lcm.openstack.org/admitted"

// Admission admits every new pod, once.
type Admission struct {
	client   kubernetes.Interface
	pods     corelisters.PodLister
	faults   *Faults
	mounts   *Mounts
	recorder record.EventRecorder
	queue    workqueue.TypedRateLimitingInterface[string]
}

func NewAdmission(client kubernetes.Interface, pods corelisters.PodLister, faults *Faults, mounts *Mounts,
	recorder record.EventRecorder) *Admission {
	return &Admission{client: client, pods: pods, faults: faults, mounts: mounts, recorder: recorder,
		queue: newQueue[string]()}
}

// unadmitted: bound to a node (a kubelet sees no pod before), not yet played
// by kwok (no pod IP, Pending), not deleted, and not yet admitted. Pods that
// kwok played before admission existed have an IP and are left alone.
func unadmitted(pod *corev1.Pod) bool {
	return pod.Spec.NodeName != "" && pod.DeletionTimestamp == nil && pod.Status.PodIP == "" &&
		pod.Status.Phase == corev1.PodPending && pod.Annotations[annotationAdmitted] == ""
}

func (a *Admission) Handler() cache.ResourceEventHandler {
	return onAddOrUpdate(func(obj interface{}) {
		if pod, ok := obj.(*corev1.Pod); ok && unadmitted(pod) {
			key, _ := cache.MetaNamespaceKeyFunc(pod)
			a.queue.Add(key)
		}
	})
}

// MountHandler takes a new Secret or ConfigMap as the kubelet's next mount
// attempt: every pod of its namespace that is not admitted yet is looked at
// again (all of them, not only those annotated as held, whose annotation may
// still be on its way).
func (a *Admission) MountHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{AddFunc: func(obj interface{}) {
		object, err := meta.Accessor(obj)
		if err != nil {
			return
		}
		pods, err := a.pods.Pods(object.GetNamespace()).List(labels.Everything())
		if err != nil {
			return
		}
		for _, pod := range pods {
			if unadmitted(pod) {
				key, _ := cache.MetaNamespaceKeyFunc(pod)
				a.queue.Add(key)
			}
		}
	}}
}

func (a *Admission) Run(ctx context.Context) {
	runQueue(ctx, "admission", a.queue, a.sync)
}

func (a *Admission) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pod, err := a.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !unadmitted(pod) {
		return nil
	}
	missing, err := a.mounts.Missing(ctx, pod)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return a.holdForVolumes(ctx, pod, missing)
	}
	annotations := map[string]interface{}{annotationAdmitted: "true"}
	if _, held := pod.Annotations[annotationMissingVolumes]; held {
		annotations[annotationMissingVolumes] = nil
	}
	removed, pod := ForOtherJob(pod)
	for k, v := range removed {
		annotations[k] = v
	}
	var ft *fault
	if !IsGated(pod) {
		if ft, err = a.faults.For(ctx, pod); err != nil {
			return err
		}
		ft.Apply(annotations)
	}
	// The uid makes the patch a precondition: a pod recreated under the same
	// name is admitted on its own event, never with this one's decision.
	patch, _ := json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{
		"uid": pod.UID, "annotations": annotations}})
	_, err = a.client.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, patch, metav1PatchOptions)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("admitting the pod: %w", err)
	}
	a.faults.Announce(pod, ft)
	return nil
}

// holdForVolumes leaves the pod unadmitted and says why: the annotation lists
// the missing objects, and a FailedMount warning per object is recorded
// whenever that list changes (a kubelet repeats it at each retry).
func (a *Admission) holdForVolumes(ctx context.Context, pod *corev1.Pod, missing []mountedObject) error {
	described := describeMissing(missing)
	if pod.Annotations[annotationMissingVolumes] == described {
		return nil
	}
	patch, _ := json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{
		"uid": pod.UID, "annotations": map[string]interface{}{annotationMissingVolumes: described}}})
	_, err := a.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1PatchOptions)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("annotating the missing volumes: %w", err)
	}
	for _, obj := range missing {
		a.recorder.Event(pod, corev1.EventTypeWarning, "FailedMount", obj.FailedMount())
	}
	return nil
}
