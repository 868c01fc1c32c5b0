package main

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
)

// Fault injection that the chart need not know about: a ConfigMap named
// bed-faults in a namespace maps a Job's name (its pods' job-name label) or a
// bare pod's name to a termination message. bedlet copies the message into
// the pod's fail annotation before kwok lets the pod's containers run, and
// kwok's stages then fail them as a kubelet shows a broken image.
const (
	faultsConfigMap = "bed-faults"
	annotationFail  = "bed.lcm.openstack.org/fail"
)

// The pod labels the Job controller sets; the first one is the current name,
// the second the legacy one, still set.
var jobNameLabels = []string{"batch.kubernetes.io/job-name", "job-name"}

// Faults decides whether a pod is to fail.
//
// It reads the ConfigMap live rather than from an informer's cache: caches
// of different kinds are not ordered with each other, so a pod created right
// after the ConfigMap could reach bedlet before the ConfigMap does. A read
// from the apiserver sees every write that came before the pod, which is
// what a test relies on when it writes the fault and then creates the Job.
type Faults struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
}

// fault is the decision for one pod: the key that names it and the message.
type fault struct {
	key, message string
}

// For returns the pod's fault, or nil when the pod already carries a fail
// annotation of its own (it wins) or when no key of its namespace's
// bed-faults names it.
func (f *Faults) For(ctx context.Context, pod *corev1.Pod) (*fault, error) {
	if _, own := pod.Annotations[annotationFail]; own {
		return nil, nil
	}
	cm, err := f.client.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, faultsConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", faultsConfigMap, err)
	}
	key, message, ok := matchFault(pod, cm.Data)
	if !ok {
		return nil, nil
	}
	return &fault{key: key, message: message}, nil
}

// Apply adds the fail annotation to a patch's annotations.
func (ft *fault) Apply(annotations map[string]interface{}) {
	if ft != nil {
		annotations[annotationFail] = ft.message
	}
}

// Announce records, once the pod carries it, why the pod will fail.
func (f *Faults) Announce(pod *corev1.Pod, ft *fault) {
	if ft != nil {
		f.recorder.Eventf(pod, corev1.EventTypeWarning, "FaultInjected",
			"%s key %q: the containers will fail with %q", faultsConfigMap, ft.key, ft.message)
	}
}

// matchFault finds the key that names the pod: its Job first, then itself.
func matchFault(pod *corev1.Pod, data map[string]string) (string, string, bool) {
	var names []string
	for _, l := range jobNameLabels {
		names = append(names, pod.Labels[l])
	}
	names = append(names, pod.Name)
	for _, name := range names {
		if name == "" {
			continue
		}
		if message, ok := data[name]; ok {
			return name, message, true
		}
	}
	return "", "", false
}
