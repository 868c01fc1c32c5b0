package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
)

// Annotations the gate writes on a gated pod. kwok's stages complete the
// init containers only once the first one says "satisfied".
const (
	annotationDependencies = "bed.lcm.openstack.org/dependencies"
	annotationWaitingFor   = "bed.lcm.openstack.org/waiting-for"
	satisfied              = "satisfied"
)

// Gate plays the kubernetes-entrypoint init container of every gated pod:
// it re-evaluates the waiting pods whenever something they may wait for
// changes (a Job, an EndpointSlice, a DaemonSet, a pod, a watched custom
// resource), and marks a pod once all its dependencies hold.
type Gate struct {
	client   kubernetes.Interface
	pods     corelisters.PodLister
	resolver *Resolver
	recorder record.EventRecorder
	faults   *Faults
	queue    workqueue.TypedRateLimitingInterface[string]
}

func NewGate(client kubernetes.Interface, pods corelisters.PodLister, resolver *Resolver, recorder record.EventRecorder, faults *Faults) *Gate {
	return &Gate{
		client:   client,
		pods:     pods,
		resolver: resolver,
		recorder: recorder,
		faults:   faults,
		queue:    newQueue[string](),
	}
}

// waiting reports whether the gate still has to decide about the pod: bound
// to a node, admitted (the entrypoint is the pod's first init container:
// nothing of it runs before the kubelet admitted the pod and mounted its
// volumes; a pod kwok played before admission existed has an IP), not
// deleted, Pending, gated, and not yet marked.
func waiting(pod *corev1.Pod) bool {
	return pod.Spec.NodeName != "" && pod.DeletionTimestamp == nil &&
		(pod.Annotations[annotationAdmitted] != "" || pod.Status.PodIP != "") &&
		pod.Status.Phase == corev1.PodPending && IsGated(pod) &&
		pod.Annotations[annotationDependencies] != satisfied
}

// Handler re-evaluates every waiting pod on any change of a watched object.
// The bed holds few pods, so a full re-evaluation is cheap and never misses a
// dependency that crosses namespaces.
func (g *Gate) Handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(interface{}) { g.enqueueWaiting() },
		UpdateFunc: func(interface{}, interface{}) { g.enqueueWaiting() },
		DeleteFunc: func(interface{}) { g.enqueueWaiting() },
	}
}

func (g *Gate) enqueueWaiting() {
	pods, err := g.pods.List(labels.Everything())
	if err != nil {
		return
	}
	for _, p := range pods {
		if waiting(p) {
			key, _ := cache.MetaNamespaceKeyFunc(p)
			g.queue.Add(key)
		}
	}
}

func (g *Gate) Run(ctx context.Context) {
	runQueue(ctx, "gate", g.queue, g.sync)
}

func (g *Gate) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pod, err := g.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !waiting(pod) {
		return nil
	}
	deps, err := ParseDependencies(pod)
	if err != nil {
		// A malformed variable stops kubernetes-entrypoint too: the pod waits.
		return g.mark(ctx, pod, "", "cannot read the dependencies: "+err.Error(), nil)
	}
	var unmet []string
	var pending error
	for _, d := range deps {
		why, err := g.resolver.Unmet(pod, d)
		if err != nil {
			why, pending = d.Describe()+": "+err.Error(), err
		}
		if why != "" {
			unmet = append(unmet, why)
		}
	}
	if len(unmet) == 0 {
		// The containers start right after this mark: the fault, if any,
		// is decided now and written in the same update, so kwok never
		// sees the pod satisfied without it.
		ft, err := g.faults.For(ctx, pod)
		if err != nil {
			return err
		}
		if err := g.mark(ctx, pod, satisfied, "", ft); err != nil {
			return err
		}
		g.faults.Announce(pod, ft)
		return nil
	}
	sort.Strings(unmet)
	if err := g.mark(ctx, pod, "", strings.Join(unmet, "; "), nil); err != nil {
		return err
	}
	return pending
}

// mark writes the verdict, and an Event when what the pod waits for changes.
// A satisfied verdict carries the pod's fault, if any.
func (g *Gate) mark(ctx context.Context, pod *corev1.Pod, verdict, waitingFor string, ft *fault) error {
	if verdict == "" && pod.Annotations[annotationWaitingFor] == waitingFor {
		return nil
	}
	annotations := map[string]interface{}{annotationWaitingFor: nil}
	if verdict != "" {
		annotations[annotationDependencies] = verdict
		ft.Apply(annotations)
	} else {
		annotations[annotationWaitingFor] = waitingFor
	}
	patch, _ := json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{
		"uid": pod.UID, "annotations": annotations}})
	_, err := g.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1PatchOptions)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("annotating the pod: %w", err)
	}
	if verdict == satisfied {
		g.recorder.Event(pod, corev1.EventTypeNormal, "DependenciesMet", "kubernetes-entrypoint: all dependencies are met")
	} else {
		g.recorder.Event(pod, corev1.EventTypeNormal, "WaitingForDependencies", "kubernetes-entrypoint: "+waitingFor)
	}
	return nil
}
