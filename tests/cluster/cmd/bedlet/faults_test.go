package main

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAnOutcomeLineChoosesTheExitCodeAndAPlainOneExitsOne(t *testing.T) {
	cases := map[string]fault{
		"db-sync: cannot reach database":      {key: "k", message: "db-sync: cannot reach database", exitCode: 1},
		"exit 2: Check: Cells v2 ... Failure": {key: "k", message: "Check: Cells v2 ... Failure", exitCode: 2},
		"exit 0":                              {key: "k", message: "", exitCode: 0},
		"exit 1:3 rows migrated":              {key: "k", message: "3 rows migrated", exitCode: 1},
		"exited 2: not an outcome line":       {key: "k", message: "exited 2: not an outcome line", exitCode: 1},
	}
	for line, want := range cases {
		if got := parseOutcome("k", line); *got != want {
			t.Errorf("parseOutcome(%q) = %+v, want %+v", line, *got, want)
		}
	}
}

func TestAValueHoldsOneOutcomePerLine(t *testing.T) {
	got := outcomes("exit 1: 50 rows\n\n  exit 1: 3 rows \nexit 0\n")
	want := []string{"exit 1: 50 rows", "exit 1: 3 rows", "exit 0"}
	if len(got) != len(want) {
		t.Fatalf("outcomes = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d = %q, want %q", i, got[i], want[i])
		}
	}
	if one := outcomes(""); len(one) != 1 || one[0] != "" {
		t.Errorf("an empty value is one outcome, got %q", one)
	}
}

func TestASuccessCarriesItsMessageAndAFailureItsCode(t *testing.T) {
	ok := map[string]interface{}{}
	(&fault{key: "k", message: "No migrations", exitCode: 0}).Apply(ok)
	if ok[annotationMessage] != "No migrations" || ok[annotationFail] != nil {
		t.Errorf("exit 0 annotations = %v", ok)
	}
	failed := map[string]interface{}{}
	(&fault{key: "k", message: "Failure", exitCode: 2}).Apply(failed)
	if failed[annotationFail] != "Failure" || failed[annotationExitCode] != "2" {
		t.Errorf("exit 2 annotations = %v", failed)
	}
	none := map[string]interface{}{}
	(*fault)(nil).Apply(none)
	if len(none) != 0 {
		t.Errorf("no fault annotates nothing, got %v", none)
	}
}

func TestOutcomesForAnotherJobAreLeftOut(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Labels: map[string]string{"batch.kubernetes.io/job-name": "keystone-db-sync-check"},
		Annotations: map[string]string{annotationForJob: "keystone-db-sync", annotationFail: "schema error",
			annotationDuration: "20s", "other": "kept"}}}
	removed, stripped := ForOtherJob(pod)
	if len(removed) != 2 || removed[annotationFail] != nil || removed[annotationDuration] != nil {
		t.Fatalf("removed %v", removed)
	}
	if _, has := stripped.Annotations[annotationFail]; has || stripped.Annotations["other"] != "kept" {
		t.Fatalf("stripped %v", stripped.Annotations)
	}
	if pod.Annotations[annotationFail] != "schema error" {
		t.Fatal("the pod read must not change")
	}
	own := pod.DeepCopy()
	own.Labels["batch.kubernetes.io/job-name"] = "keystone-db-sync"
	if removed, same := ForOtherJob(own); removed != nil || same != own {
		t.Fatalf("the Job it was written for keeps it: %v", removed)
	}
}
