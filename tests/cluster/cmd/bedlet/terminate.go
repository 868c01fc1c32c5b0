package main

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// A deleted pod has no containers to stop on the bed, so it goes at once,
// and bedlet is what confirms it, as a kubelet does: the final delete has a
// grace period of 0 and the pod's UID as its precondition. kwok's stages
// can only delete by name, and a stage played late (a loaded bed) then
// removed the new pod created under the same name meanwhile: the test pod
// a phase replaces, a StatefulSet's replacement pod. A kubelet's late
// confirmation meets the precondition and changes nothing.
//
// Finalizers are left to whoever set them, as a kubelet leaves them: the
// apiserver removes the pod once they are gone (the Job controller takes
// its job-tracking finalizer off a deleted pod, which it counts as failed).

// podRef is one pod, not one name: the queue's key.
type podRef struct {
	namespace, name string
	uid             types.UID
}

func (r podRef) String() string { return r.namespace + "/" + r.name }

// Terminator confirms the deletion of every pod that has a deletionTimestamp.
type Terminator struct {
	client kubernetes.Interface
	queue  workqueue.TypedRateLimitingInterface[podRef]
}

func NewTerminator(client kubernetes.Interface) *Terminator {
	return &Terminator{client: client, queue: newQueue[podRef]()}
}

func (t *Terminator) Handler() cache.ResourceEventHandler {
	return onAddOrUpdate(func(obj interface{}) {
		pod, ok := obj.(*corev1.Pod)
		if !ok || pod.DeletionTimestamp == nil {
			return
		}
		// Confirmed already: the apiserver keeps the pod only for its finalizers.
		if g := pod.DeletionGracePeriodSeconds; g != nil && *g == 0 {
			return
		}
		t.queue.Add(podRef{pod.Namespace, pod.Name, pod.UID})
	})
}

func (t *Terminator) Run(ctx context.Context) {
	runQueue(ctx, "terminate", t.queue, t.confirm)
}

func (t *Terminator) confirm(ctx context.Context, ref podRef) error {
	uid := ref.uid
	zero := int64(0)
	err := t.client.CoreV1().Pods(ref.namespace).Delete(ctx, ref.name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid}})
	// Gone, or a pod of another UID under that name now: nothing left to confirm.
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("confirming the deletion: %w", err)
	}
	return nil
}
