package builtinconf

import (
	"fmt"
	"os"
	"strings"

	"sigs.k8s.io/yaml"
)

// A resourceInfo is how the table's name of a resource is reached.
type resourceInfo struct {
	// prefix is the group version's path: /api/v1 or /apis/<group>/<version>.
	prefix, apiVersion, kind, plural string
	namespaced                       bool
}

// resources are the built-in resources the table names (builtin/apis.yaml).
var resources = map[string]resourceInfo{
	"namespaces":                        {"/api/v1", "v1", "Namespace", "namespaces", false},
	"configmaps":                        {"/api/v1", "v1", "ConfigMap", "configmaps", true},
	"secrets":                           {"/api/v1", "v1", "Secret", "secrets", true},
	"events":                            {"/api/v1", "v1", "Event", "events", true},
	"events.events.k8s.io":              {"/apis/events.k8s.io/v1", "events.k8s.io/v1", "Event", "events", true},
	"leases":                            {"/apis/coordination.k8s.io/v1", "coordination.k8s.io/v1", "Lease", "leases", true},
	"roles":                             {"/apis/rbac.authorization.k8s.io/v1", "rbac.authorization.k8s.io/v1", "Role", "roles", true},
	"rolebindings":                      {"/apis/rbac.authorization.k8s.io/v1", "rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings", true},
	"clusterroles":                      {"/apis/rbac.authorization.k8s.io/v1", "rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", false},
	"clusterrolebindings":               {"/apis/rbac.authorization.k8s.io/v1", "rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", false},
	"validatingwebhookconfigurations":   {"/apis/admissionregistration.k8s.io/v1", "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "validatingwebhookconfigurations", false},
	"mutatingwebhookconfigurations":     {"/apis/admissionregistration.k8s.io/v1", "admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "mutatingwebhookconfigurations", false},
	"validatingadmissionpolicies":       {"/apis/admissionregistration.k8s.io/v1", "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", "validatingadmissionpolicies", false},
	"validatingadmissionpolicybindings": {"/apis/admissionregistration.k8s.io/v1", "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings", false},
	"mutatingadmissionpolicies":         {"/apis/admissionregistration.k8s.io/v1", "admissionregistration.k8s.io/v1", "MutatingAdmissionPolicy", "mutatingadmissionpolicies", false},
	"mutatingadmissionpolicybindings":   {"/apis/admissionregistration.k8s.io/v1", "admissionregistration.k8s.io/v1", "MutatingAdmissionPolicyBinding", "mutatingadmissionpolicybindings", false},
}

// A Case is one row of testdata/cases.yaml: a short sequence of requests,
// each answer recorded. Every case runs in a namespace of its own,
// {ns} in the table; names of cluster-scoped objects carry {run}, which
// is unique to a run.
type Case struct {
	// Name says what the case checks.
	Name string `json:"name"`
	// Resource is the resource its steps address unless a step names
	// another: a key of resources (configmaps, events.events.k8s.io, ...).
	Resource string `json:"resource"`
	// Differs, when set, says why apiloom answers otherwise than
	// kube-apiserver: the case still runs and its difference is reported
	// as documented, never skipped. A known bug's reads "KNOWN BUG, not
	// deliberate: ...".
	Differs string `json:"differs,omitempty"`
	// Steps run in order.
	Steps []Step `json:"steps"`
}

// A Step is one request (or, for watch, a watch around requests). Exactly
// one verb is set. Before it is sent every string of the step has its
// placeholders replaced: {ns}, {run}, and the {uidN}, {rvN} and {genN}
// earlier answers of the case were given.
type Step struct {
	// Resource overrides the case's resource for this step.
	Resource string `json:"resource,omitempty"`
	// Namespace overrides the case's namespace for this step.
	Namespace string `json:"namespace,omitempty"`

	// Create POSTs the object to the collection; apiVersion and kind are
	// the resource's unless given.
	Create map[string]any `json:"create,omitempty"`
	// Get GETs "name" or "name/subresource".
	Get string `json:"get,omitempty"`
	// List GETs the collection with the selectors given.
	List *Selectors `json:"list,omitempty"`
	// Update GETs the object (or its subresource) and PUTs it back with
	// Set merged in (RFC 7386: null removes a field).
	Update *Update `json:"update,omitempty"`
	// Patch PATCHes the object with a body of a type.
	Patch *Patch `json:"patch,omitempty"`
	// Delete DELETEs the object, with DeleteOptions as the body if given.
	Delete *Delete `json:"delete,omitempty"`
	// DeleteCollection DELETEs the collection with the selectors given.
	DeleteCollection *Selectors `json:"deleteCollection,omitempty"`
	// Raw sends a request to a path of its own (discovery: /api/).
	Raw *Raw `json:"raw,omitempty"`
	// Watch watches the collection from the resourceVersion a list gives,
	// runs its steps, and records every event up to the one that carries
	// the resourceVersion the last step answered.
	Watch *Watch `json:"watch,omitempty"`

	// Query is added to the request's query (fieldManager=x&force=true).
	Query string `json:"query,omitempty"`
}

// Selectors are a list's or a deletecollection's label and field selectors.
type Selectors struct {
	LabelSelector string `json:"labelSelector,omitempty"`
	FieldSelector string `json:"fieldSelector,omitempty"`
}

// An Update is a GET and PUT of the object called Name ("name" or
// "name/subresource"; the GET reads the object itself for "finalize").
type Update struct {
	Name string         `json:"name"`
	Set  map[string]any `json:"set,omitempty"`
}

// A Patch is a PATCH of Name ("name" or "name/subresource") of Type
// merge, json, strategic or apply. An apply's body gets the resource's
// apiVersion and kind and the name unless given, and the request
// fieldManager=builtinconf unless the query names one.
type Patch struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Body any    `json:"body"`
}

// A Delete is a DELETE of Name, with Options (a DeleteOptions) as the body.
type Delete struct {
	Name    string         `json:"name"`
	Options map[string]any `json:"options,omitempty"`
}

// A Raw request is a GET (or Method) of Path, which is not the resource's.
type Raw struct {
	Method string `json:"method,omitempty"`
	Path   string `json:"path"`
}

// A Watch watches the collection (with selectors) around its steps.
type Watch struct {
	Selectors `json:",inline"`
	Steps     []Step `json:"steps"`
}

var patchTypes = map[string]string{
	"merge":     "application/merge-patch+json",
	"json":      "application/json-patch+json",
	"strategic": "application/strategic-merge-patch+json",
	"apply":     "application/apply-patch+yaml",
}

// verb names the step's one verb.
func (s Step) verb() (string, error) {
	var verbs []string
	for _, v := range []struct {
		name string
		set  bool
	}{{"create", s.Create != nil}, {"get", s.Get != ""}, {"list", s.List != nil}, {"update", s.Update != nil},
		{"patch", s.Patch != nil}, {"delete", s.Delete != nil}, {"deleteCollection", s.DeleteCollection != nil},
		{"raw", s.Raw != nil}, {"watch", s.Watch != nil}} {
		if v.set {
			verbs = append(verbs, v.name)
		}
	}
	if len(verbs) != 1 {
		return "", fmt.Errorf("a step needs exactly one verb, has %d %v", len(verbs), verbs)
	}
	return verbs[0], nil
}

// check says what is wrong with a step, or nil.
func (s Step) check(caseResource string, nested bool) error {
	verb, err := s.verb()
	if err != nil {
		return err
	}
	r := s.Resource
	if r == "" {
		r = caseResource
	}
	if _, ok := resources[r]; !ok {
		return fmt.Errorf("unknown resource %q", r)
	}
	switch verb {
	case "patch":
		if _, ok := patchTypes[s.Patch.Type]; !ok {
			return fmt.Errorf("unknown patch type %q", s.Patch.Type)
		}
	case "watch":
		if nested {
			return fmt.Errorf("a watch inside a watch")
		}
		if len(s.Watch.Steps) == 0 {
			return fmt.Errorf("a watch without steps")
		}
		for i, w := range s.Watch.Steps {
			if err := w.check(r, true); err != nil {
				return fmt.Errorf("watch step %d: %w", i+1, err)
			}
		}
	}
	return nil
}

// loadCases reads the table and checks it: unique names, one verb a
// step, known resources and patch types.
func loadCases(path string) ([]Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cases []Case
	if err := yaml.UnmarshalStrict(data, &cases); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	seen := map[string]bool{}
	for _, c := range cases {
		if strings.TrimSpace(c.Name) == "" {
			return nil, fmt.Errorf("%s: a case without a name", path)
		}
		if seen[c.Name] {
			return nil, fmt.Errorf("%s: two cases named %q", path, c.Name)
		}
		seen[c.Name] = true
		if len(c.Steps) == 0 {
			return nil, fmt.Errorf("%s: case %q has no steps", path, c.Name)
		}
		for i, s := range c.Steps {
			if err := s.check(c.Resource, false); err != nil {
				return nil, fmt.Errorf("%s: case %q step %d: %w", path, c.Name, i+1, err)
			}
		}
	}
	return cases, nil
}
