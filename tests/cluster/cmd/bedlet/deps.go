package main

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The environment that openstack-helm's helm-toolkit gives the
// kubernetes-entrypoint init container. Its presence on any init container
// is what makes a pod "gated": a kubelet would run that container until the
// dependencies hold, so the bed must not let the pod start before.
const dependencyPrefix = "DEPENDENCY_"

// Dependency is one thing a gated pod waits for. Describe is what the bed
// reports while it is unmet, in the words kubernetes-entrypoint uses.
type Dependency struct {
	Kind      string // Job, Service, DaemonSet, Container, Pod, CustomResource
	Namespace string
	Name      string
	Labels    map[string]string // Job (JSON form) and Pod dependencies select by labels
	SameNode  bool              // Pod: only pods on the gated pod's node count
	Resource  *customResource
}

type customResource struct {
	APIVersion string        `json:"apiVersion"`
	Kind       string        `json:"kind"`
	Name       string        `json:"name"`
	Namespace  string        `json:"namespace"`
	Fields     []crField     `json:"fields"`
	Conditions []crCondition `json:"conditions"`
}

type crField struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type crCondition struct {
	Type   string `json:"type"`
	Status string `json:"status"`
}

func (d Dependency) Describe() string {
	switch {
	case d.Kind == "CustomResource":
		return fmt.Sprintf("%s %s/%s (%s)", d.Resource.Kind, d.Namespace, d.Name, d.Resource.APIVersion)
	case d.Kind == "Container":
		return "container " + d.Name
	case d.Name == "":
		return fmt.Sprintf("%ss with labels %v in %s", d.Kind, d.Labels, d.Namespace)
	default:
		return fmt.Sprintf("%s %s/%s", d.Kind, d.Namespace, d.Name)
	}
}

// IsGated tells whether the pod has a kubernetes-entrypoint init container.
func IsGated(pod *corev1.Pod) bool {
	for _, c := range pod.Spec.InitContainers {
		for _, e := range c.Env {
			if strings.HasPrefix(e.Name, dependencyPrefix) {
				return true
			}
		}
	}
	return false
}

// envValue resolves an env var as the kubelet would for the two downward-API
// fields kubernetes-entrypoint reads (POD_NAME, NAMESPACE).
func envValue(pod *corev1.Pod, e corev1.EnvVar) string {
	if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
		switch e.ValueFrom.FieldRef.FieldPath {
		case "metadata.name":
			return pod.Name
		case "metadata.namespace":
			return pod.Namespace
		}
	}
	return e.Value
}

// ParseDependencies reads every kubernetes-entrypoint init container of the
// pod. It follows the entrypoint's rules: comma lists of `name` or
// `namespace:name`, the base namespace from NAMESPACE (else "default"),
// DEPENDENCY_JOBS_JSON taking precedence over DEPENDENCY_JOBS.
func ParseDependencies(pod *corev1.Pod) ([]Dependency, error) {
	var deps []Dependency
	for _, c := range pod.Spec.InitContainers {
		env := map[string]string{}
		gated := false
		for _, e := range c.Env {
			env[e.Name] = envValue(pod, e)
			gated = gated || strings.HasPrefix(e.Name, dependencyPrefix)
		}
		if !gated {
			continue
		}
		more, err := containerDependencies(env)
		if err != nil {
			return nil, fmt.Errorf("init container %s: %w", c.Name, err)
		}
		deps = append(deps, more...)
	}
	return deps, nil
}

func containerDependencies(env map[string]string) ([]Dependency, error) {
	base := env["NAMESPACE"]
	if base == "" {
		base = "default"
	}
	var deps []Dependency
	if raw := env["DEPENDENCY_JOBS_JSON"]; raw != "" {
		var jobs []struct {
			Name      string            `json:"name"`
			Labels    map[string]string `json:"labels"`
			Namespace string            `json:"namespace"`
		}
		if err := json.Unmarshal([]byte(raw), &jobs); err != nil {
			return nil, fmt.Errorf("DEPENDENCY_JOBS_JSON: %w", err)
		}
		for _, j := range jobs {
			if j.Name != "" && j.Labels != nil {
				return nil, fmt.Errorf("DEPENDENCY_JOBS_JSON: job %q has both a name and labels", j.Name)
			}
			deps = append(deps, Dependency{Kind: "Job", Namespace: or(j.Namespace, base), Name: j.Name, Labels: j.Labels})
		}
	} else {
		deps = append(deps, commaList("Job", env["DEPENDENCY_JOBS"], base)...)
	}
	deps = append(deps, commaList("Service", env["DEPENDENCY_SERVICE"], base)...)
	deps = append(deps, commaList("DaemonSet", env["DEPENDENCY_DAEMONSET"], base)...)
	for _, d := range commaList("Container", env["DEPENDENCY_CONTAINER"], base) {
		if strings.Contains(env["DEPENDENCY_CONTAINER"], ":") {
			return nil, fmt.Errorf("DEPENDENCY_CONTAINER does not take a namespace")
		}
		deps = append(deps, d)
	}
	if raw := env["DEPENDENCY_POD_JSON"]; raw != "" {
		var pods []struct {
			Labels          map[string]string `json:"labels"`
			Namespace       string            `json:"namespace"`
			RequireSameNode bool              `json:"requireSameNode"`
		}
		if err := json.Unmarshal([]byte(raw), &pods); err != nil {
			return nil, fmt.Errorf("DEPENDENCY_POD_JSON: %w", err)
		}
		for _, p := range pods {
			deps = append(deps, Dependency{Kind: "Pod", Namespace: or(p.Namespace, base), Labels: p.Labels, SameNode: p.RequireSameNode})
		}
	}
	if raw := strings.TrimSpace(env["DEPENDENCY_CUSTOM_RESOURCE"]); raw != "" {
		var crs []customResource
		if err := json.Unmarshal([]byte(raw), &crs); err != nil {
			return nil, fmt.Errorf("DEPENDENCY_CUSTOM_RESOURCE: %w", err)
		}
		for i := range crs {
			cr := crs[i]
			cr.Namespace = or(cr.Namespace, base)
			deps = append(deps, Dependency{Kind: "CustomResource", Namespace: cr.Namespace, Name: cr.Name, Resource: &cr})
		}
	}
	return deps, nil
}

// commaList parses `a,ns:b`; malformed items are skipped, as the entrypoint
// skips them with a warning.
func commaList(kind, value, base string) []Dependency {
	var deps []Dependency
	if value == "" {
		return deps
	}
	for _, item := range strings.Split(value, ",") {
		if item == "" {
			continue
		}
		ns, name := base, item
		if strings.Contains(item, ":") {
			parts := strings.Split(item, ":")
			if len(parts) != 2 || parts[0] == "" {
				continue
			}
			ns, name = parts[0], parts[1]
		}
		deps = append(deps, Dependency{Kind: kind, Namespace: ns, Name: name})
	}
	return deps
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
