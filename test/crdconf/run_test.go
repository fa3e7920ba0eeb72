package crdconf

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"k8s.io/client-go/rest"
)

const (
	group      = "crdconf.apiloom.dev"
	apiVersion = group + "/v1"
	kind       = "Widget"
	resource   = "widgets"
)

// The hooked kind, Gadget, is a Widget whose mutating hooks change nothing
// (hooks/crdconf/v1): the table runs against it too and its answers, with
// its names read as Widget's, must be the CRD's.
const (
	hookedKind     = "Gadget"
	hookedResource = "gadgets"
)

// An Outcome is what a server answered to one step: the HTTP code, and
// either the Status's reason, message and causes or the object's spec and
// status. The namespace, which differs between runs, reads NS.
type Outcome struct {
	Code    int            `json:"code"`
	Reason  string         `json:"reason,omitempty"`
	Message string         `json:"message,omitempty"`
	Causes  []Cause        `json:"causes,omitempty"`
	Spec    map[string]any `json:"spec,omitempty"`
	Status  map[string]any `json:"status,omitempty"`
	// Generation, Labels and Annotations are the object's metadata that
	// the server's strategy decides (resource.Strategy).
	Generation  int64             `json:"generation,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// A Cause is one entry of a Status's details.causes: the field, the
// cause's type (FieldValueRequired, ...; "reason" on the wire) and message.
type Cause struct {
	Field   string `json:"field,omitempty"`
	Type    string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// A CaseOutcome is every step's Outcome of one case, in order.
type CaseOutcome struct {
	Name  string    `json:"name"`
	Steps []Outcome `json:"steps"`
}

// A target is a server the table runs against.
type target struct {
	client    *http.Client
	host      string
	namespace string
	// kind and resource are those the table writes: Widget's unless
	// hooked (withHookedKind).
	kind, resource string
	// seed writes value at key in the server's etcd, bypassing the server.
	seed func(ctx context.Context, key, value string) error
}

func newTarget(cfg *rest.Config, namespace string, seed func(ctx context.Context, key, value string) error) (*target, error) {
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &target{client: c, host: strings.TrimSuffix(cfg.Host, "/"), namespace: namespace, kind: kind, resource: resource, seed: seed}, nil
}

// withHookedKind makes the table write Gadgets, whose answers then name
// Widgets (normalize).
func (tg *target) withHookedKind() *target {
	h := *tg
	h.kind, h.resource = hookedKind, hookedResource
	return &h
}

// runCases runs every case against tg and returns the answers. An error is
// the harness failing (a request that could not be sent, an answer that is
// not JSON), never a server's refusal: refusals are outcomes.
func runCases(ctx context.Context, tg *target, cases []Case) ([]CaseOutcome, error) {
	out := make([]CaseOutcome, 0, len(cases))
	for _, c := range cases {
		co := CaseOutcome{Name: c.Name}
		for i, s := range c.Steps {
			o, err := tg.step(ctx, objectName(c), s)
			if err != nil {
				return nil, fmt.Errorf("case %q step %d: %w", c.Name, i+1, err)
			}
			co.Steps = append(co.Steps, o)
		}
		out = append(out, co)
	}
	return out, nil
}

func (tg *target) path(name, sub string) string {
	p := "/apis/" + apiVersion + "/namespaces/" + tg.namespace + "/" + tg.resource
	if name != "" {
		p += "/" + name
	}
	if sub != "" {
		p += "/" + sub
	}
	return p
}

// step runs one step on the object called name.
func (tg *target) step(ctx context.Context, name string, s Step) (Outcome, error) {
	verb, frag, _ := s.verb()
	query := ""
	if s.DryRun {
		query = "?dryRun=All"
	}
	switch verb {
	case "create":
		obj, err := merge(tg.baseObject(name), frag)
		if err != nil {
			return Outcome{}, err
		}
		return tg.do(ctx, http.MethodPost, tg.path("", "")+query, "application/json", obj)
	case "update", "status":
		cur, o, err := tg.get(ctx, name)
		if err != nil || cur == nil {
			return o, err
		}
		obj, err := merge(cur, frag)
		if err != nil {
			return Outcome{}, err
		}
		sub := ""
		if verb == "status" {
			sub = "status"
		}
		return tg.do(ctx, http.MethodPut, tg.path(name, sub)+query, "application/json", obj)
	case "put":
		obj, err := merge(tg.baseObject(name), frag)
		if err != nil {
			return Outcome{}, err
		}
		return tg.do(ctx, http.MethodPut, tg.path(name, "")+query, "application/json", obj)
	case "patch", "statusPatch":
		sub := ""
		if verb == "statusPatch" {
			sub = "status"
		}
		p, err := json.Marshal(frag)
		if err != nil {
			return Outcome{}, err
		}
		return tg.do(ctx, http.MethodPatch, tg.path(name, sub)+query, "application/merge-patch+json", p)
	case "apply":
		obj, err := merge(map[string]any{"apiVersion": apiVersion, "kind": tg.kind, "metadata": map[string]any{"name": name}}, frag)
		if err != nil {
			return Outcome{}, err
		}
		q := "?fieldManager=crdconf&force=true"
		if s.DryRun {
			q += "&dryRun=All"
		}
		return tg.do(ctx, http.MethodPatch, tg.path(name, "")+q, "application/apply-patch+yaml", obj)
	case "seed":
		base := tg.baseObject(name)
		meta := base["metadata"].(map[string]any)
		meta["namespace"] = tg.namespace
		meta["uid"] = "6a1d2b5e-0000-4000-8000-000000000000"
		meta["creationTimestamp"] = "2026-01-01T00:00:00Z"
		meta["generation"] = 1
		obj, err := merge(base, frag)
		if err != nil {
			return Outcome{}, err
		}
		key := "/registry/" + group + "/" + tg.resource + "/" + tg.namespace + "/" + name
		if err := tg.seed(ctx, key, string(obj)); err != nil {
			return Outcome{}, fmt.Errorf("seed %s: %w", key, err)
		}
		_, o, err := tg.get(ctx, name)
		return o, err
	}
	return Outcome{}, fmt.Errorf("unknown verb %q", verb)
}

// baseObject is a valid Widget called name.
func (tg *target) baseObject(name string) map[string]any {
	spec := map[string]any{}
	for k, v := range baseSpec {
		spec[k] = v
	}
	return map[string]any{"apiVersion": apiVersion, "kind": tg.kind, "metadata": map[string]any{"name": name}, "spec": spec}
}

// get reads the object; cur is nil (and o the answer) when it cannot.
func (tg *target) get(ctx context.Context, name string) (cur []byte, o Outcome, err error) {
	code, body, err := tg.send(ctx, http.MethodGet, tg.path(name, ""), "", nil)
	if err != nil {
		return nil, Outcome{}, err
	}
	o, err = tg.outcome(code, body)
	if err != nil || code != http.StatusOK {
		return nil, o, err
	}
	return body, o, nil
}

func (tg *target) do(ctx context.Context, method, path, contentType string, body []byte) (Outcome, error) {
	code, resp, err := tg.send(ctx, method, path, contentType, body)
	if err != nil {
		return Outcome{}, err
	}
	return tg.outcome(code, resp)
}

func (tg *target) send(ctx context.Context, method, path, contentType string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, tg.host+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := tg.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// outcome reads an answer: a Status, or the object written.
func (tg *target) outcome(code int, body []byte) (Outcome, error) {
	var m struct {
		Kind    string `json:"kind"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
		Details *struct {
			Causes []Cause `json:"causes"`
		} `json:"details"`
		Spec     map[string]any  `json:"spec"`
		Status   json.RawMessage `json:"status"`
		Metadata struct {
			Generation  int64             `json:"generation"`
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return Outcome{}, fmt.Errorf("answer %d is not JSON: %w: %q", code, err, body)
	}
	o := Outcome{Code: code}
	if m.Kind == "Status" {
		o.Reason = m.Reason
		o.Message = tg.normalize(m.Message)
		if m.Details != nil {
			for _, c := range m.Details.Causes {
				c.Message = tg.normalize(c.Message)
				o.Causes = append(o.Causes, c)
			}
		}
		canonicalOrder(&o)
		return o, nil
	}
	o.Spec = m.Spec
	o.Generation, o.Labels, o.Annotations = m.Metadata.Generation, m.Metadata.Labels, m.Metadata.Annotations
	if len(m.Status) > 0 {
		if err := json.Unmarshal(m.Status, &o.Status); err != nil {
			return Outcome{}, fmt.Errorf("answer %d: status: %w", code, err)
		}
	}
	// A typed kind always has a status struct, which encodes as {}; a
	// CRD's object has none until one is written. Both mean no status.
	if len(o.Status) == 0 {
		o.Status = nil
	}
	return o, nil
}

// canonicalOrder sorts the causes and, when the message lists them in
// the order they came (as kube-apiserver's "<kind> <name> is invalid: [a,
// b]" does), lists them sorted in the message too: kube-apiserver
// validates a schema's properties in map order, so the order of its
// causes differs from run to run. A message that does not list the causes
// so is kept as it is, to be compared as it is.
func canonicalOrder(o *Outcome) {
	if len(o.Causes) < 2 {
		return
	}
	list := func(cs []Cause) string {
		parts := make([]string, len(cs))
		for i, c := range cs {
			parts[i] = c.Field + ": " + c.Message
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	asSent := list(o.Causes)
	slices.SortStableFunc(o.Causes, func(a, b Cause) int {
		return cmp.Or(strings.Compare(a.Field, b.Field), strings.Compare(a.Type, b.Type), strings.Compare(a.Message, b.Message))
	})
	if prefix, ok := strings.CutSuffix(o.Message, asSent); ok {
		o.Message = prefix + list(o.Causes)
	}
}

// normalize reads the run's namespace as NS and the hooked kind's names
// as Widget's.
func (tg *target) normalize(s string) string {
	s = strings.ReplaceAll(s, tg.namespace, "NS")
	if tg.kind != kind {
		s = strings.ReplaceAll(s, tg.kind+"."+group, kind+"."+group)
		s = strings.ReplaceAll(s, tg.resource+"."+group, resource+"."+group)
		s = strings.ReplaceAll(s, "Kind="+tg.kind, "Kind="+kind)
	}
	return s
}

// merge merges frag into doc (a value or its JSON) as a JSON merge patch
// does (RFC 7386), but for one thing: a null for a field doc does not
// have is kept, so a case can send a null. Neither argument changes.
func merge(doc any, frag map[string]any) ([]byte, error) {
	d, ok := doc.([]byte)
	if !ok {
		var err error
		if d, err = json.Marshal(doc); err != nil {
			return nil, err
		}
	}
	var m map[string]any
	if err := json.Unmarshal(d, &m); err != nil {
		return nil, err
	}
	f, err := json.Marshal(frag)
	if err != nil {
		return nil, err
	}
	var fm map[string]any
	if err := json.Unmarshal(f, &fm); err != nil {
		return nil, err
	}
	mergeInto(m, fm)
	return json.Marshal(m)
}

func mergeInto(doc, frag map[string]any) {
	for k, v := range frag {
		old, has := doc[k]
		switch vm := v.(type) {
		case nil:
			if has {
				delete(doc, k)
			} else {
				doc[k] = nil
			}
		case map[string]any:
			if om, ok := old.(map[string]any); ok {
				mergeInto(om, vm)
			} else {
				doc[k] = vm
			}
		default:
			doc[k] = v
		}
	}
}
