package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
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
//
// A value may choose the exit code ("exit 2: <message>"; plain text exits
// 1), and may hold one outcome per line: the first pod the key names takes
// the first line, the next pod the next line, and the last line stays (an
// upgrade check that warns, an online migration that reports more to do
// twice and then none: "exit 1: 50 rows migrated\nexit 1: 3 rows\nexit 0").
// "exit 0" lets the pod succeed, with the message as its termination message.
const (
	faultsConfigMap    = "bed-faults"
	annotationFail     = "bed.lcm.openstack.org/fail"
	annotationExitCode = "bed.lcm.openstack.org/exit-code"
	annotationMessage  = "bed.lcm.openstack.org/message"
	annotationDuration = "bed.lcm.openstack.org/duration"
	// A chart's own outcome annotations (the example chart's simulate values)
	// are for the Job named here: a Job made from that Job's pod template to
	// run another command (an upgrade's check, expand or contract) runs as
	// its own command would, with none of them.
	annotationForJob = "bed.lcm.openstack.org/for-job"
	// On the ConfigMap: how many pods each key has decided so far, so that a
	// restarted bedlet carries on with the next line.
	annotationDecided = "decided.bed.lcm.openstack.org/"
)

var outcomeLine = regexp.MustCompile(`^exit (\d{1,3})(?::\s*(.*))?$`)

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

	mu      sync.Mutex
	decided map[types.UID]*fault // a pod decided again (a retried patch) keeps its outcome
}

// fault is the decision for one pod: the key that names it, the exit code
// and the message.
type fault struct {
	key, message string
	exitCode     int
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
	key, value, ok := matchFault(pod, cm.Data)
	if !ok {
		return nil, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if ft, seen := f.decided[pod.UID]; seen {
		return ft, nil
	}
	lines := outcomes(value)
	n, _ := strconv.Atoi(cm.Annotations[annotationDecided+key])
	ft := parseOutcome(key, lines[min(n, len(lines)-1)])
	if len(lines) > 1 {
		if err := f.count(ctx, cm, key, n+1); err != nil {
			return nil, err
		}
	}
	if f.decided == nil {
		f.decided = map[types.UID]*fault{}
	}
	f.decided[pod.UID] = ft
	return ft, nil
}

// count records on the ConfigMap how many pods the key has decided; the
// resourceVersion makes a concurrent write a conflict, retried by the queue.
func (f *Faults) count(ctx context.Context, cm *corev1.ConfigMap, key string, n int) error {
	cm = cm.DeepCopy()
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[annotationDecided+key] = strconv.Itoa(n)
	_, err := f.client.CoreV1().ConfigMaps(cm.Namespace).Update(ctx, cm, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("counting the outcomes of %s key %q: %w", faultsConfigMap, key, err)
	}
	return nil
}

// outcomes splits a value into its lines, blank ones dropped (at least one).
func outcomes(value string) []string {
	var lines []string
	for _, line := range strings.Split(value, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 {
		return []string{""}
	}
	return lines
}

// parseOutcome reads "exit N: message", "exit N" or a bare message (exit 1).
func parseOutcome(key, line string) *fault {
	if m := outcomeLine.FindStringSubmatch(line); m != nil {
		code, _ := strconv.Atoi(m[1])
		return &fault{key: key, message: m[2], exitCode: code}
	}
	return &fault{key: key, message: line, exitCode: 1}
}

// Apply adds the outcome's annotations to a patch's annotations: the fail
// annotation and the exit code for a failure, the message for a success.
func (ft *fault) Apply(annotations map[string]interface{}) {
	switch {
	case ft == nil:
	case ft.exitCode == 0:
		annotations[annotationMessage] = ft.message
	default:
		annotations[annotationFail] = ft.message
		annotations[annotationExitCode] = strconv.Itoa(ft.exitCode)
	}
}

// Announce records, once the pod carries it, how the pod will end.
func (f *Faults) Announce(pod *corev1.Pod, ft *fault) {
	switch {
	case ft == nil:
	case ft.exitCode == 0:
		f.recorder.Eventf(pod, corev1.EventTypeNormal, "OutcomeInjected",
			"%s key %q: the containers will exit 0 with %q", faultsConfigMap, ft.key, ft.message)
	default:
		f.recorder.Eventf(pod, corev1.EventTypeWarning, "FaultInjected",
			"%s key %q: the containers will fail with exit code %d and %q", faultsConfigMap, ft.key, ft.exitCode, ft.message)
	}
}

// ForOtherJob returns the outcome annotations a pod carries for another Job
// than its own (annotationForJob), each set to nil for a merge patch to
// remove, and the pod as it is without them; nil and the pod itself when
// there are none.
func ForOtherJob(pod *corev1.Pod) (map[string]interface{}, *corev1.Pod) {
	meant, ok := pod.Annotations[annotationForJob]
	if !ok || meant == "" {
		return nil, pod
	}
	for _, l := range jobNameLabels {
		if pod.Labels[l] == meant {
			return nil, pod
		}
	}
	removed := map[string]interface{}{}
	stripped := pod.DeepCopy()
	for _, k := range []string{annotationFail, annotationExitCode, annotationMessage, annotationDuration} {
		if _, has := pod.Annotations[k]; has {
			removed[k] = nil
			delete(stripped.Annotations, k)
		}
	}
	return removed, stripped
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
