package admissionconf

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// awaitTimeout bounds each wait for a configuration to take effect; both
// servers take about a second (the policies' informers and their
// recompilation), kube-apiserver under a loaded test machine a few.
const awaitTimeout = 20 * time.Second

// scenarioTimeout bounds a whole scenario on one server.
const scenarioTimeout = 60 * time.Second

// target is one of the two servers under comparison.
type target struct {
	name  string
	c     *client
	hooks *hookServer // its own webhook server, so that its calls are recorded apart
	down  string      // a webhook URL nobody listens at
}

// observation is one compared thing of a scenario: a write's answer, the
// requests a webhook received, or the error that ended the scenario. Its
// value is JSON with the run's addresses replaced by placeholders.
type observation struct {
	Label string
	Value string
}

// run is one scenario on one target: it sets up, waits, writes and
// records observations.
type run struct {
	ctx context.Context
	tg  *target
	scn string // the scenario's name, which names its objects
	ns  string // its namespace
	obs []observation
}

// scenario is a named sequence of setup, waits and checked writes, run
// alike on both servers.
type scenario struct {
	name string
	run  func(r *run) error
}

// runScenarios runs every scenario on tg, in order, and returns the
// observations of each.
func runScenarios(ctx context.Context, tg *target, scns []scenario) map[string][]observation {
	out := map[string][]observation{}
	for _, s := range scns {
		sctx, cancel := context.WithTimeout(ctx, scenarioTimeout)
		r := &run{ctx: sctx, tg: tg, scn: s.name, ns: "admconf-" + s.name}
		if err := s.run(r); err != nil {
			r.obs = append(r.obs, observation{"ended by", r.placeholders(err.Error())})
		}
		cancel()
		out[s.name] = r.obs
	}
	return out
}

// placeholders replaces the run's addresses, which differ between the
// targets, in s.
func (r *run) placeholders(s string) string {
	s = strings.ReplaceAll(s, strings.TrimPrefix(r.tg.hooks.srv.URL, "https://"), "{webhook}")
	if u, err := url.Parse(r.tg.down); err == nil {
		s = strings.ReplaceAll(s, u.Host, "{down}")
	}
	// Go's HTTP client says how a timed-out call ended in words that
	// depend on when it noticed; the timeout is the same.
	return strings.ReplaceAll(s, "context deadline exceeded (Client.Timeout exceeded while awaiting headers)", "context deadline exceeded")
}

// record adds an observation of v.
func (r *run) record(label string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		data = []byte(err.Error())
	}
	r.obs = append(r.obs, observation{label, r.placeholders(string(data))})
}

// name is the name of the scenario's policies, bindings and webhook
// configurations.
func (r *run) name() string { return "admconf-" + r.scn }

func cmPath(ns string) string     { return "/api/v1/namespaces/" + ns + "/configmaps" }
func secretPath(ns string) string { return "/api/v1/namespaces/" + ns + "/secrets" }

const nsPath = "/api/v1/namespaces"

// setup creates obj at path (a collection) and requires it created.
func (r *run) setup(path string, obj any) error {
	a, err := r.tg.c.do(r.ctx, http.MethodPost, path, nil, "", obj)
	if err != nil {
		return err
	}
	if a.Code != http.StatusCreated {
		return fmt.Errorf("setup: POST %s: %d %s", path, a.Code, a.Message)
	}
	return nil
}

// namespace creates the namespace name in the scenario, with extra labels.
func (r *run) namespace(name string, extra map[string]string) error {
	labels := map[string]string{scenarioLabel: r.scn}
	for k, v := range extra {
		labels[k] = v
	}
	return r.setup(nsPath, map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": name, "labels": labels},
	})
}

// write sends a checked write and records its answer under label.
func (r *run) write(label, method, path string, query url.Values, contentType string, body any) (answer, error) {
	a, err := r.tg.c.do(r.ctx, method, path, query, contentType, body)
	if err != nil {
		return a, err
	}
	r.record(label, a)
	return a, nil
}

// create is a checked POST of obj to the collection at path.
func (r *run) create(label, path string, obj any) (answer, error) {
	return r.write(label, http.MethodPost, path, nil, "", obj)
}

// updateStatus GETs the namespace name and PUTs it to its status
// subresource with labels set, as a checked write when label is not empty.
func (r *run) updateStatus(label, name string, subresource string, labels map[string]string) (answer, error) {
	got, err := r.tg.c.do(r.ctx, http.MethodGet, nsPath+"/"+name, nil, "", nil)
	if err != nil {
		return got, err
	}
	if got.failed() {
		return got, fmt.Errorf("GET namespace %s: %d %s", name, got.Code, got.Message)
	}
	meta := got.object["metadata"].(map[string]any)
	l, _ := meta["labels"].(map[string]any)
	if l == nil {
		l = map[string]any{}
	}
	for k, v := range labels {
		l[k] = v
	}
	meta["labels"] = l
	path := nsPath + "/" + name
	if subresource != "" {
		path += "/" + subresource
	}
	if label == "" {
		return r.tg.c.do(r.ctx, http.MethodPut, path, nil, "", got.object)
	}
	return r.write(label, http.MethodPut, path, nil, "", got.object)
}

// await repeats probe every 100ms until done accepts its answer, and
// fails when awaitTimeout passes first: how a scenario knows that what it
// configured is in effect.
func (r *run) await(what string, probe func() (answer, error), done func(answer) bool) error {
	ctx, cancel := context.WithTimeout(r.ctx, awaitTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last answer
	for {
		a, err := probe()
		if err == nil && done(a) {
			return nil
		}
		if err == nil {
			last = a
		}
		select {
		case <-ctx.Done():
			data, _ := json.Marshal(last)
			return fmt.Errorf("%s: not in effect within %v; the last probe's answer: %s", what, awaitTimeout, data)
		case <-tick.C:
		}
	}
}

// dryRunCreate is a probe: a dry-run POST of obj to path.
func (r *run) dryRunCreate(path string, obj any) func() (answer, error) {
	return func() (answer, error) {
		return r.tg.c.do(r.ctx, http.MethodPost, path, dryRun, "", obj)
	}
}

// awaitDenied waits until a dry-run create of obj at path is refused.
func (r *run) awaitDenied(what, path string, obj any) error {
	return r.await(what, r.dryRunCreate(path, obj), answer.failed)
}

// reviews records the AdmissionReview requests of the test's user that
// the scenario's webhook of behaviour received, normalised, but those of
// probes and of objects named missing-* (reviewsOf counts those).
func (r *run) reviews(label, behaviour string) {
	type seen struct {
		name string
		req  map[string]any
	}
	var reqs []seen
	for _, raw := range r.tg.hooks.requests(r.scn, behaviour) {
		req, name := normalizeReview(raw)
		// Only the test's own writes: apiloom's namespace controller
		// writes the status of a namespace being deleted, on its own time.
		u, _ := req["userInfo"].(map[string]any)
		if u["username"] != testUser {
			continue
		}
		if !strings.HasPrefix(name, "probe-") && !strings.HasPrefix(name, "missing-") {
			reqs = append(reqs, seen{name, req})
		}
	}
	// By object name: a deletecollection's items come in any order; the
	// writes to one object come in the order sent.
	sort.SliceStable(reqs, func(i, j int) bool { return reqs[i].name < reqs[j].name })
	r.record(label+": how many", len(reqs))
	for i, s := range reqs {
		r.record(fmt.Sprintf("%s %d (%v of %s)", label, i+1, s.req["operation"], s.name), s.req)
	}
}

// credentialID is the userInfo extra naming the client's credential.
const credentialID = "authentication.kubernetes.io/credential-id"

// normalizeReview decodes an AdmissionReview request and replaces what is
// unique to a run (its uid, the objects' uids, resourceVersions and
// times, the client certificate's hash) by placeholders; it also returns
// the name of the object written.
func normalizeReview(raw json.RawMessage) (map[string]any, string) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return map[string]any{"undecodable": string(raw)}, ""
	}
	if _, ok := m["uid"]; ok {
		m["uid"] = "{uid}"
	}
	// The client certificate's hash: each server's admin has its own.
	if u, ok := m["userInfo"].(map[string]any); ok {
		if extra, ok := u["extra"].(map[string]any); ok {
			if _, ok := extra[credentialID]; ok {
				extra[credentialID] = "{credential-id}"
			}
		}
	}
	// A namespace's DeleteOptions carry its uid as a precondition.
	if o, ok := m["options"].(map[string]any); ok {
		if p, ok := o["preconditions"].(map[string]any); ok {
			if _, ok := p["uid"]; ok {
				p["uid"] = "{uid}"
			}
		}
	}
	for _, k := range []string{"object", "oldObject"} {
		if o, ok := m[k].(map[string]any); ok {
			normalizeObject(o)
		}
	}
	// The object's name: the request's, else (a deletecollection's items
	// on kube-apiserver have none) the object's.
	name, _ := m["name"].(string)
	for _, k := range []string{"object", "oldObject"} {
		if o, ok := m[k].(map[string]any); ok && name == "" {
			if meta, ok := o["metadata"].(map[string]any); ok {
				name, _ = meta["name"].(string)
			}
		}
	}
	return m, name
}

// normalizeObject replaces an object's uid, resourceVersion and times by
// placeholders, in place.
func normalizeObject(o map[string]any) {
	meta, ok := o["metadata"].(map[string]any)
	if !ok {
		return
	}
	for k, placeholder := range map[string]string{"uid": "{uid}", "resourceVersion": "{rv}", "creationTimestamp": "{time}"} {
		if v, ok := meta[k]; ok && v != nil && v != "" {
			meta[k] = placeholder
		}
	}
	if mfs, ok := meta["managedFields"].([]any); ok {
		for _, mf := range mfs {
			if e, ok := mf.(map[string]any); ok {
				if _, ok := e["time"]; ok {
					e["time"] = "{time}"
				}
			}
		}
	}
}

// reviewsOf records how many requests the scenario's webhook of behaviour
// received for the object name.
func (r *run) reviewsOf(label, behaviour, name string) {
	n := 0
	for _, raw := range r.tg.hooks.requests(r.scn, behaviour) {
		if _, got := normalizeReview(raw); got == name {
			n++
		}
	}
	r.record(label, n)
}
