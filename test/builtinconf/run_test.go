package builtinconf

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// An Outcome is what a server answered to one step, normalised: the HTTP
// code and the body (a Status, an object or a list). A watch's outcome
// also has its steps' outcomes and the events they caused.
type Outcome struct {
	Code   int       `json:"code"`
	Body   any       `json:"body,omitempty"`
	Steps  []Outcome `json:"steps,omitempty"`
	Events []Event   `json:"events,omitempty"`
}

// An Event is one watch event: its type and object, normalised.
type Event struct {
	Type   string `json:"type"`
	Object any    `json:"object"`
}

// A CaseOutcome is every step's Outcome of one case, in order.
type CaseOutcome struct {
	Name  string    `json:"name"`
	Steps []Outcome `json:"steps"`
}

// watchTimeout bounds how long a watch step waits for the event its last
// step caused; an event that never comes is recorded as missing.
// noObjectWait is how long it waits for events when the last step
// answered no object to wait for.
const (
	watchTimeout = 15 * time.Second
	noObjectWait = 2 * time.Second
)

// A target is a server the table runs against.
type target struct {
	client *http.Client
	host   string
	// run is unique to this run of the table: it names the case's
	// namespaces and stands for {run}.
	run string
}

func newTarget(cfg *rest.Config, run string) (*target, error) {
	cfg = rest.CopyConfig(cfg)
	// A watch lives until its step ends it; no client-side timeout.
	cfg.Timeout = 0
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &target{client: c, host: strings.TrimSuffix(cfg.Host, "/"), run: run}, nil
}

// namespace is the namespace case i runs in.
func (tg *target) namespace(i int) string { return fmt.Sprintf("bc-%d-%s", i+1, tg.run) }

// runCases runs every case against tg, each in a namespace of its own it
// creates first, and returns the answers. An error is the harness failing
// (a request that could not be sent, an answer that is not JSON), never
// a server's refusal: refusals are outcomes.
func runCases(ctx context.Context, tg *target, cases []Case) ([]CaseOutcome, error) {
	out := make([]CaseOutcome, 0, len(cases))
	for i, c := range cases {
		ns := tg.namespace(i)
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, ns)
		code, resp, err := tg.send(ctx, http.MethodPost, "/api/v1/namespaces", "application/json", []byte(body))
		if err != nil {
			return nil, err
		}
		if code != http.StatusCreated {
			return nil, fmt.Errorf("case %q: create namespace %s: %d %s", c.Name, ns, code, resp)
		}
		cr := newCaseRun(tg, c, ns)
		co := CaseOutcome{Name: c.Name}
		for j, s := range c.Steps {
			o, err := cr.step(ctx, s)
			if err != nil {
				return nil, fmt.Errorf("case %q step %d: %w", c.Name, j+1, err)
			}
			co.Steps = append(co.Steps, o)
		}
		out = append(out, co)
	}
	return out, nil
}

// deleteNamespaces deletes the namespaces runCases made for n cases.
func deleteNamespaces(ctx context.Context, tg *target, n int) {
	for i := range n {
		_, _, _ = tg.send(ctx, http.MethodDelete, "/api/v1/namespaces/"+tg.namespace(i), "", nil)
	}
}

// A caseRun is one case being run: its namespace and the placeholders
// its answers have given so far.
type caseRun struct {
	tg *target
	c  Case
	ns string
	n  *normalizer
	// lastRV is the resourceVersion of the object the last step answered.
	lastRV string
	// generateName is the create's metadata.generateName while it runs:
	// the name its answer carries (in the object, or a refusal's details)
	// was generated.
	generateName string
}

func newCaseRun(tg *target, c Case, ns string) *caseRun {
	return &caseRun{tg: tg, c: c, ns: ns, n: newNormalizer(ns, tg.run)}
}

// path is the resource's collection path in namespace ns (the case's
// if ""), with name and subresource ("name/sub") if given.
func (cr *caseRun) path(r resourceInfo, ns, name string) string {
	if ns == "" {
		ns = cr.ns
	}
	p := r.prefix
	if r.namespaced {
		p += "/namespaces/" + ns
	}
	p += "/" + r.plural
	if name != "" {
		p += "/" + name
	}
	return p
}

// step runs one step.
func (cr *caseRun) step(ctx context.Context, s Step) (Outcome, error) {
	s, err := cr.n.expand(s)
	if err != nil {
		return Outcome{}, err
	}
	cr.lastRV = ""
	verb, _ := s.verb()
	rname := s.Resource
	if rname == "" {
		rname = cr.c.Resource
	}
	r := resources[rname]
	query := func(extra url.Values) string {
		q, _ := url.ParseQuery(s.Query)
		for k, vs := range extra {
			for _, v := range vs {
				q.Add(k, v)
			}
		}
		if len(q) == 0 {
			return ""
		}
		return "?" + q.Encode()
	}
	switch verb {
	case "create":
		obj := withTypeMeta(s.Create, r, "")
		body, err := json.Marshal(obj)
		if err != nil {
			return Outcome{}, err
		}
		if meta, ok := obj["metadata"].(map[string]any); ok {
			cr.generateName, _ = meta["generateName"].(string)
		}
		defer func() { cr.generateName = "" }()
		return cr.do(ctx, http.MethodPost, cr.path(r, s.Namespace, "")+query(nil), "application/json", body)
	case "get":
		return cr.do(ctx, http.MethodGet, cr.path(r, s.Namespace, s.Get)+query(nil), "", nil)
	case "list":
		return cr.do(ctx, http.MethodGet, cr.path(r, s.Namespace, "")+query(s.List.values()), "", nil)
	case "update":
		from := s.Update.Name
		if name, sub, _ := strings.Cut(from, "/"); sub == "finalize" {
			from = name
		}
		code, cur, err := cr.tg.send(ctx, http.MethodGet, cr.path(r, s.Namespace, from), "", nil)
		if err != nil {
			return Outcome{}, err
		}
		if code != http.StatusOK {
			return cr.outcome(code, cur)
		}
		body, err := merge(cur, s.Update.Set)
		if err != nil {
			return Outcome{}, err
		}
		return cr.do(ctx, http.MethodPut, cr.path(r, s.Namespace, s.Update.Name)+query(nil), "application/json", body)
	case "patch":
		b := s.Patch.Body
		extra := url.Values{}
		if s.Patch.Type == "apply" {
			name, _, _ := strings.Cut(s.Patch.Name, "/")
			if m, ok := b.(map[string]any); ok {
				b = withTypeMeta(m, r, name)
			}
			if q, _ := url.ParseQuery(s.Query); q.Get("fieldManager") == "" {
				extra.Set("fieldManager", "builtinconf")
			}
		}
		body, err := json.Marshal(b)
		if err != nil {
			return Outcome{}, err
		}
		return cr.do(ctx, http.MethodPatch, cr.path(r, s.Namespace, s.Patch.Name)+query(extra), patchTypes[s.Patch.Type], body)
	case "delete":
		var body []byte
		ct := ""
		if s.Delete.Options != nil {
			if body, err = json.Marshal(s.Delete.Options); err != nil {
				return Outcome{}, err
			}
			ct = "application/json"
		}
		return cr.do(ctx, http.MethodDelete, cr.path(r, s.Namespace, s.Delete.Name)+query(nil), ct, body)
	case "deleteCollection":
		return cr.do(ctx, http.MethodDelete, cr.path(r, s.Namespace, "")+query(s.DeleteCollection.values()), "", nil)
	case "raw":
		method := s.Raw.Method
		if method == "" {
			method = http.MethodGet
		}
		return cr.do(ctx, method, s.Raw.Path, "", nil)
	case "watch":
		return cr.watch(ctx, r, s)
	}
	return Outcome{}, fmt.Errorf("unknown verb %q", verb)
}

func (s *Selectors) values() url.Values {
	q := url.Values{}
	if s.LabelSelector != "" {
		q.Set("labelSelector", s.LabelSelector)
	}
	if s.FieldSelector != "" {
		q.Set("fieldSelector", s.FieldSelector)
	}
	return q
}

// withTypeMeta is obj with the resource's apiVersion and kind, and name
// as metadata.name, where obj has none.
func withTypeMeta(obj map[string]any, r resourceInfo, name string) map[string]any {
	out := map[string]any{"apiVersion": r.apiVersion, "kind": r.kind}
	for k, v := range obj {
		out[k] = v
	}
	if name != "" {
		meta, _ := out["metadata"].(map[string]any)
		m := map[string]any{"name": name}
		for k, v := range meta {
			m[k] = v
		}
		out["metadata"] = m
	}
	return out
}

// watch lists the collection for a resourceVersion, watches from it, runs
// the watch's steps, and reads events until one carries the
// resourceVersion the last step answered (or watchTimeout passes).
func (cr *caseRun) watch(ctx context.Context, r resourceInfo, s Step) (Outcome, error) {
	sel := s.Watch.values()
	code, body, err := cr.tg.send(ctx, http.MethodGet, cr.path(r, s.Namespace, "")+"?"+sel.Encode(), "", nil)
	if err != nil {
		return Outcome{}, err
	}
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &list); err != nil || code != http.StatusOK {
		return Outcome{}, fmt.Errorf("watch: list %d: %s", code, body)
	}
	sel.Set("watch", "true")
	sel.Set("resourceVersion", list.Metadata.ResourceVersion)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(wctx, http.MethodGet, cr.tg.host+cr.path(r, s.Namespace, "")+"?"+sel.Encode(), nil)
	if err != nil {
		return Outcome{}, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := cr.tg.client.Do(req)
	if err != nil {
		return Outcome{}, err
	}
	defer resp.Body.Close()
	out := Outcome{Code: resp.StatusCode}
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		out.Body, err = cr.n.body(data)
		return out, err
	}
	type rawEvent struct {
		Type   string          `json:"type"`
		Object json.RawMessage `json:"object"`
	}
	events := make(chan rawEvent)
	go func() {
		defer close(events)
		dec := json.NewDecoder(resp.Body)
		for {
			var e rawEvent
			if dec.Decode(&e) != nil {
				return
			}
			select {
			case events <- e:
			case <-wctx.Done():
				return
			}
		}
	}()
	for i, ws := range s.Watch.Steps {
		if ws.Resource == "" {
			ws.Resource = s.Resource
		}
		o, err := cr.step(ctx, ws)
		if err != nil {
			return Outcome{}, fmt.Errorf("watch step %d: %w", i+1, err)
		}
		out.Steps = append(out.Steps, o)
	}
	until, wait := cr.lastRV, watchTimeout
	if until == "" {
		// The last step answered no object (a refusal, or a Status):
		// nothing says which event is the last, so a short wait stands in.
		wait = noObjectWait
	}
	timeout := time.NewTimer(wait)
	defer timeout.Stop()
	for {
		select {
		case e, ok := <-events:
			if !ok {
				return out, nil
			}
			var meta struct {
				Metadata struct {
					ResourceVersion string `json:"resourceVersion"`
				} `json:"metadata"`
			}
			_ = json.Unmarshal(e.Object, &meta)
			obj, err := cr.n.body(e.Object)
			if err != nil {
				return Outcome{}, fmt.Errorf("watch event: %w", err)
			}
			out.Events = append(out.Events, Event{Type: e.Type, Object: obj})
			if until != "" && meta.Metadata.ResourceVersion == until {
				return out, nil
			}
		case <-timeout.C:
			if until != "" {
				out.Events = append(out.Events, Event{Type: "(the last step's event did not come)"})
			}
			return out, nil
		}
	}
}

func (cr *caseRun) do(ctx context.Context, method, path, contentType string, body []byte) (Outcome, error) {
	code, resp, err := cr.tg.send(ctx, method, path, contentType, body)
	if err != nil {
		return Outcome{}, err
	}
	return cr.outcome(code, resp)
}

// outcome normalises an answer and remembers what later steps may name:
// a generated name, and the resourceVersion a watch waits for.
func (cr *caseRun) outcome(code int, body []byte) (Outcome, error) {
	var meta struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name            string `json:"name"`
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Details struct {
			Name string `json:"name"`
		} `json:"details"`
	}
	if err := json.Unmarshal(body, &meta); err != nil {
		return Outcome{}, fmt.Errorf("answer %d is not JSON: %w: %q", code, err, body)
	}
	if p := cr.generateName; p != "" {
		for _, name := range []string{meta.Metadata.Name, meta.Details.Name} {
			if name != p && strings.HasPrefix(name, p) {
				cr.n.generated(name)
			}
		}
	}
	if meta.Kind != "Status" && meta.Metadata.ResourceVersion != "" {
		cr.lastRV = meta.Metadata.ResourceVersion
	}
	b, err := cr.n.body(body)
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Code: code, Body: b}, nil
}

func (tg *target) send(ctx context.Context, method, path, contentType string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, tg.host+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "builtinconf")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := tg.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	if len(data) == 0 {
		return 0, nil, errors.New(method + " " + path + ": empty answer")
	}
	return resp.StatusCode, data, nil
}

// merge merges frag into doc (JSON) as a JSON merge patch does (RFC 7386).
func merge(doc []byte, frag map[string]any) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		return nil, err
	}
	mergeInto(m, frag)
	return json.Marshal(m)
}

func mergeInto(doc, frag map[string]any) {
	for k, v := range frag {
		switch vm := v.(type) {
		case nil:
			delete(doc, k)
		case map[string]any:
			if om, ok := doc[k].(map[string]any); ok {
				mergeInto(om, vm)
			} else {
				doc[k] = vm
			}
		default:
			doc[k] = v
		}
	}
}
