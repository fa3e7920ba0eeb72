package crdconf

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// A Case is one row of testdata/cases.yaml: a short story of writes to one
// Widget (named after the case), each step's answer recorded.
type Case struct {
	// Name says what the case checks; the object's name is made from it.
	Name string `json:"name"`
	// Marker names the marker (or behaviour) the case exercises.
	Marker string `json:"marker,omitempty"`
	// Differs, when set, says why apiloom deliberately answers otherwise
	// than the CRD: the case still runs and its difference is reported as
	// documented, never skipped.
	Differs string `json:"differs,omitempty"`
	// Steps run in order; every step's answer is recorded.
	Steps []Step `json:"steps"`
}

// A Step is one request. Exactly one of its verbs is set; its value is a
// fragment of a Widget (spec and/or status) merged (RFC 7386: null deletes
// a field the object has; a null for one it lacks is sent as null)
// over the object the verb starts from.
type Step struct {
	// Create POSTs the fragment merged over a valid Widget (baseSpec).
	Create map[string]any `json:"create,omitempty"`
	// Update GETs the object and PUTs it with the fragment merged in.
	Update map[string]any `json:"update,omitempty"`
	// Put PUTs the fragment merged over a valid Widget, without a
	// resourceVersion: an unconditional update.
	Put map[string]any `json:"put,omitempty"`
	// Patch sends the fragment as a JSON merge patch.
	Patch map[string]any `json:"patch,omitempty"`
	// Apply sends the fragment, with apiVersion, kind and name, as a
	// server-side apply (field manager "crdconf", forced).
	Apply map[string]any `json:"apply,omitempty"`
	// Status GETs the object and PUTs it to /status with the fragment merged in.
	Status map[string]any `json:"status,omitempty"`
	// StatusPatch sends the fragment as a JSON merge patch to /status.
	StatusPatch map[string]any `json:"statusPatch,omitempty"`
	// Seed writes the fragment merged over a valid Widget straight into
	// etcd, past all validation, then reads it back: the state of an object
	// stored before a marker was tightened (the ratcheting cases).
	Seed map[string]any `json:"seed,omitempty"`
	// DryRun adds dryRun=All to the request.
	DryRun bool `json:"dryRun,omitempty"`
}

// verb names the step's one verb and its fragment.
func (s Step) verb() (string, map[string]any, error) {
	var name string
	var body map[string]any
	n := 0
	for _, v := range []struct {
		name string
		body map[string]any
	}{{"create", s.Create}, {"update", s.Update}, {"put", s.Put}, {"patch", s.Patch}, {"apply", s.Apply},
		{"status", s.Status}, {"statusPatch", s.StatusPatch}, {"seed", s.Seed}} {
		if v.body != nil {
			name, body = v.name, v.body
			n++
		}
	}
	if n != 1 {
		return "", nil, fmt.Errorf("a step needs exactly one verb, has %d", n)
	}
	return name, body, nil
}

// baseSpec is a valid spec: a create's fragment is merged over it.
var baseSpec = map[string]any{"engine": "postgres", "owner": "o"}

var nonName = regexp.MustCompile(`[^a-z0-9]+`)

// objectName is the Widget's name for a case: its name as a DNS label.
func objectName(c Case) string {
	n := strings.Trim(nonName.ReplaceAllString(strings.ToLower(c.Name), "-"), "-")
	if len(n) > 63 {
		n = strings.TrimRight(n[:63], "-")
	}
	return n
}

// loadCases reads the table and checks it: unique object names, one verb a step.
func loadCases(path string) ([]Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cases []Case
	if err := yaml.UnmarshalStrict(data, &cases); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	seen := map[string]string{}
	for _, c := range cases {
		n := objectName(c)
		if n == "" {
			return nil, fmt.Errorf("%s: case %q has no usable name", path, c.Name)
		}
		if other, ok := seen[n]; ok {
			return nil, fmt.Errorf("%s: cases %q and %q name the same object %q", path, other, c.Name, n)
		}
		seen[n] = c.Name
		if len(c.Steps) == 0 {
			return nil, fmt.Errorf("%s: case %q has no steps", path, c.Name)
		}
		for i, s := range c.Steps {
			if _, _, err := s.verb(); err != nil {
				return nil, fmt.Errorf("%s: case %q step %d: %w", path, c.Name, i+1, err)
			}
		}
	}
	return cases, nil
}
