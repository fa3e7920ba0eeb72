package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"time"

	"github.com/apiloom/apiloom/cmd/apiloom-load/internal/accounting"
)

// getKinds are the list scenario's GETs of single objects by name, one
// kind after the other: Consistent with resourceVersion unset (a quorum
// read from etcd on both servers), RV0 with resourceVersion=0 (answered
// from the watch cache). Issue 18 asks that their cost not grow with the
// objects stored, which only runs at several sizes show.
type getKinds struct {
	Consistent getTimes `json:"consistent"`
	RV0        getTimes `json:"rv0"`
}

// getTimes are the latencies of one kind of GET, from request to the
// last byte of the body, and the measured processes' CPU over all of them.
type getTimes struct {
	Latency accounting.Latencies `json:"latency"`
	CPU     cpuSpan              `json:"cpu"`
}

// cpuPerGet is the measured processes' CPU per GET; zero without GETs.
func (g *getTimes) cpuPerGet() time.Duration {
	if g.Latency.Count == 0 {
		return 0
	}
	return g.CPU.Total / time.Duration(g.Latency.Count)
}

// getSeed fixes the objects the GETs read, so that every target of a run
// (and every run) reads the same names in the same order.
const getSeed = 18

// getNames returns n names drawn uniformly, with replacement, from the
// objects prefix-000000 .. objects-1, in an order fixed by seed. Drawing
// over the whole range, rather than a prefix of it, keeps the reads from
// favouring the oldest objects (or one region of etcd's key space).
func getNames(prefix string, objects, n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, seed))
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%06d", prefix, rng.IntN(objects))
	}
	return names
}

// timeGets GETs each of names by name, one after the other on t.plain,
// first with resourceVersion unset, then with resourceVersion=0, sampling
// the measured processes' CPU around each kind. Any answer but 200 OK
// ends it with an error.
func timeGets(ctx context.Context, t *target, s *sampler, names []string) (*getKinds, error) {
	g := &getKinds{}
	for _, kind := range []struct {
		rv0   bool
		times *getTimes
	}{{false, &g.Consistent}, {true, &g.RV0}} {
		samples := make([]time.Duration, 0, len(names))
		before := s.sample(ctx)
		for _, name := range names {
			d, err := timeGet(ctx, t, name, kind.rv0)
			if err != nil {
				return nil, err
			}
			samples = append(samples, d)
		}
		if span, ok := cpuBetween(before, s.sample(ctx)); ok {
			kind.times.CPU = span
		}
		kind.times.Latency = accounting.Summarize(samples)
	}
	return g, nil
}

// getTimeout bounds one GET whatever the server does.
const getTimeout = 30 * time.Second

// timeGet times one GET of the object called name, from request to the
// last byte of the body. The body must be that object: a 200 answer with
// something else (a list, another object) is an error, not a fast GET.
func timeGet(ctx context.Context, t *target, name string, rv0 bool) (time.Duration, error) {
	u := t.collection + "/" + url.PathEscape(name)
	if rv0 {
		u += "?resourceVersion=0"
	}
	ctx, cancel := context.WithTimeout(ctx, getTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	start := time.Now()
	resp, err := t.plain.Do(req)
	if err != nil {
		return 0, fmt.Errorf("GET %s: %w", name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("GET %s: %w", name, err)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: HTTP %d: %.300s", name, resp.StatusCode, body)
	}
	var obj struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := jsonAPI.Unmarshal(body, &obj); err != nil {
		return 0, fmt.Errorf("GET %s: decode: %w", name, err)
	}
	if obj.Metadata.Name != name {
		return 0, fmt.Errorf("GET %s: answered with %q: %.300s", name, obj.Metadata.Name, body)
	}
	return d, nil
}
