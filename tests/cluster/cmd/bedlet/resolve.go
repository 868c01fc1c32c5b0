package main

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	appslisters "k8s.io/client-go/listers/apps/v1"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
)

// Resolver answers "does this dependency hold?" from informer caches, with
// kubernetes-entrypoint's semantics. The entrypoint compares host IPs; every
// fake node has the same IP, so the bed compares node names instead.
type Resolver struct {
	Jobs       batchlisters.JobLister
	Slices     discoverylisters.EndpointSliceLister
	DaemonSets appslisters.DaemonSetLister
	Pods       corelisters.PodLister
	Resources  *CustomResources
}

// Unmet returns why the dependency does not hold, or "" when it does.
// An error means the answer is not known yet (a cache still filling).
func (r *Resolver) Unmet(pod *corev1.Pod, d Dependency) (string, error) {
	switch d.Kind {
	case "Job":
		return r.job(d)
	case "Service":
		return r.service(d)
	case "DaemonSet":
		return r.daemonSet(pod, d)
	case "Container":
		for _, s := range pod.Status.ContainerStatuses {
			if s.Name == d.Name && s.Ready {
				return "", nil
			}
		}
		return "container " + d.Name + " is not ready", nil
	case "Pod":
		return r.pods(pod, d)
	case "CustomResource":
		return r.customResource(d)
	}
	return "", fmt.Errorf("unknown dependency kind %s", d.Kind)
}

// job: every matching Job must have succeeded at least once.
func (r *Resolver) job(d Dependency) (string, error) {
	lister := r.Jobs.Jobs(d.Namespace)
	var names []string
	if d.Name != "" {
		job, err := lister.Get(d.Name)
		if apierrors.IsNotFound(err) {
			return "job " + d.Name + " does not exist", nil
		}
		if err != nil {
			return "", err
		}
		if job.Status.Succeeded == 0 {
			return "job " + d.Name + " is not completed yet", nil
		}
		return "", nil
	}
	jobs, err := lister.List(labels.SelectorFromSet(d.Labels))
	if err != nil {
		return "", err
	}
	if len(jobs) == 0 {
		return fmt.Sprintf("no jobs with labels %v", d.Labels), nil
	}
	for _, job := range jobs {
		if job.Status.Succeeded == 0 {
			names = append(names, job.Name)
		}
	}
	if len(names) > 0 {
		return "jobs " + strings.Join(names, ",") + " are not completed yet", nil
	}
	return "", nil
}

// service: some EndpointSlice of the Service has a ready endpoint with an
// address (Endpoints objects are mirrored into slices by the controller).
func (r *Resolver) service(d Dependency) (string, error) {
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: d.Name})
	slices, err := r.Slices.EndpointSlices(d.Namespace).List(sel)
	if err != nil {
		return "", err
	}
	for _, s := range slices {
		for _, e := range s.Endpoints {
			if len(e.Addresses) > 0 && (e.Conditions.Ready == nil || *e.Conditions.Ready) {
				return "", nil
			}
		}
	}
	return "service " + d.Name + " has no ready endpoints", nil
}

// daemonSet: the DaemonSet exists, and its pod on this node (if any) is ready.
func (r *Resolver) daemonSet(pod *corev1.Pod, d Dependency) (string, error) {
	ds, err := r.DaemonSets.DaemonSets(d.Namespace).Get(d.Name)
	if apierrors.IsNotFound(err) {
		return "daemonset " + d.Name + " does not exist", nil
	}
	if err != nil {
		return "", err
	}
	sel, err := metaSelector(ds.Spec.Selector)
	if err != nil {
		return "", err
	}
	pods, err := r.Pods.Pods(d.Namespace).List(sel)
	if err != nil {
		return "", err
	}
	for _, p := range pods {
		if p.Spec.NodeName != pod.Spec.NodeName {
			continue
		}
		if podReady(p) {
			return "", nil
		}
		return fmt.Sprintf("pod %s of daemonset %s is not ready", p.Name, d.Name), nil
	}
	return "", nil
}

// pods: at least one pod with the labels (on this node, when asked) is ready.
func (r *Resolver) pods(pod *corev1.Pod, d Dependency) (string, error) {
	pods, err := r.Pods.Pods(d.Namespace).List(labels.SelectorFromSet(d.Labels))
	if err != nil {
		return "", err
	}
	if len(pods) == 0 {
		return fmt.Sprintf("no pods with labels %v", d.Labels), nil
	}
	for _, p := range pods {
		if d.SameNode && p.Spec.NodeName != pod.Spec.NodeName {
			continue
		}
		if podReady(p) {
			return "", nil
		}
	}
	where := ""
	if d.SameNode {
		where = " on node " + pod.Spec.NodeName
	}
	return fmt.Sprintf("no ready pods%s with labels %v", where, d.Labels), nil
}

// customResource: every field equals its string value, every condition has
// its status ("True" unless given).
func (r *Resolver) customResource(d Dependency) (string, error) {
	cr := d.Resource
	obj, err := r.Resources.Get(cr.APIVersion, cr.Kind, cr.Namespace, cr.Name)
	if err != nil {
		return "", err
	}
	if obj == nil {
		return fmt.Sprintf("%s %s does not exist", cr.Kind, cr.Name), nil
	}
	for _, f := range cr.Fields {
		actual, found, err := unstructured.NestedFieldNoCopy(obj.Object, strings.Split(f.Key, ".")...)
		if err != nil || !found {
			return fmt.Sprintf("%s %s has no field %s", cr.Kind, cr.Name, f.Key), nil
		}
		if s, ok := actual.(string); !ok || s != f.Value {
			return fmt.Sprintf("%s %s: %s is %v, not %s", cr.Kind, cr.Name, f.Key, actual, f.Value), nil
		}
	}
	for _, c := range cr.Conditions {
		want := or(c.Status, "True")
		if got := conditionStatus(obj, c.Type); got != want {
			return fmt.Sprintf("%s %s: condition %s is %q, not %s", cr.Kind, cr.Name, c.Type, got, want), nil
		}
	}
	return "", nil
}

func conditionStatus(obj *unstructured.Unstructured, ctype string) string {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, item := range conds {
		c, ok := item.(map[string]interface{})
		if ok && c["type"] == ctype {
			s, _ := c["status"].(string)
			return s
		}
	}
	return ""
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
