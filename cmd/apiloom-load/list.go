package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"runtime"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/apiloom/apiloom/cmd/apiloom-load/internal/accounting"
)

// listResult is the outcome of the list scenario.
type listResult struct {
	Objects int `json:"objects"`
	// Creators is how many creates (and patches) were in flight at once.
	Creators    int           `json:"creators,omitempty"`
	Created     int64         `json:"created"`
	CreateTime  time.Duration `json:"createTime"`
	CreateRate  float64       `json:"createRate"`
	CreateError string        `json:"createError,omitempty"`
	// Updated objects, by one merge patch of each object's payload with
	// the creators' concurrency: what a write costs once the object exists
	// (managed fields, the old object, a larger etcd transaction).
	Updated     int64         `json:"updated"`
	UpdateTime  time.Duration `json:"updateTime"`
	UpdateRate  float64       `json:"updateRate"`
	UpdateError string        `json:"updateError,omitempty"`
	// Items is how many objects a consistent LIST returned (the namespace may hold
	// the other scenarios' objects too); Bytes is the body's size after
	// any decompression; Compressed says whether it came gzipped.
	Items      int  `json:"items"`
	Bytes      int  `json:"bytes"`
	Compressed bool `json:"compressed"`
	// The LIST times, accepting gzip unless the run said not to.
	listKinds
	PageSize   int `json:"pageSize"`
	Pages      int `json:"pages"`
	PagedItems int `json:"pagedItems"`
	// Identity is the same LISTs asking for no compression, when the
	// ones above accepted gzip.
	Identity *listKinds `json:"identity,omitempty"`
	// CreateCPU and UpdateCPU are the measured processes' CPU during the
	// creates and the patches.
	CreateCPU cpuSpan `json:"createCPU"`
	UpdateCPU cpuSpan `json:"updateCPU"`
	// Gets are GetRequests GETs of single objects of each kind, after the
	// LISTs; absent from runs without them (or whose GETs failed, then
	// GetError says why).
	GetRequests int       `json:"getRequests,omitempty"`
	Gets        *getKinds `json:"gets,omitempty"`
	GetError    string    `json:"getError,omitempty"`
}

// listKinds are the times of each kind of LIST. RV0 and Consistent are
// whole LISTs, resourceVersion=0 and unset; Paged is a whole paged
// traversal: a consistent LIST with limit=PageSize, then each continue
// token until none is left, as client-go's pager and kubectl get do
// (Pages and PagedItems are what one traversal saw).
type listKinds struct {
	RV0        listTimes `json:"rv0"`
	Consistent listTimes `json:"consistent"`
	Paged      listTimes `json:"paged"`
}

type listTimes struct {
	Median time.Duration   `json:"median"`
	All    []time.Duration `json:"all"`
	// CPU is the measured processes' CPU over all these LISTs.
	CPU cpuSpan `json:"cpu"`
}

// runList creates the objects (skipping those that exist), patches each,
// and times whole LISTs without pagination, as an informer's fallback list
// and kubectl's RV=0 reads do, and paged traversals, as client-go's pager
// does, in turn; then GETs of single objects by name. A failed GET is
// recorded in the result and leaves the LIST figures standing.
func runList(ctx context.Context, c *config, t *target, objs *objectFactory, s *sampler, logf logFunc) (*listResult, error) {
	res := &listResult{Objects: c.ListObjects, Creators: c.ListCreators, PageSize: c.ListPageSize}
	logf("list: creating %d objects with %d creators", c.ListObjects, c.ListCreators)
	before := s.sample(ctx)
	start := time.Now()
	created, err := createMissing(ctx, t, objs, "load-list", c.ListObjects, c.ListCreators)
	res.CreateTime = time.Since(start)
	res.CreateCPU, _ = cpuBetween(before, s.sample(ctx))
	res.Created = created
	res.CreateRate = float64(res.Created) / res.CreateTime.Seconds()
	if err != nil && ctx.Err() == nil {
		res.CreateError = err.Error()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	logf("list: created %d in %v; updating each once", res.Created, res.CreateTime.Round(time.Millisecond))
	before = s.sample(ctx)
	start = time.Now()
	updated, err := patchAll(ctx, t, objs, "load-list", c.ListObjects, c.ListCreators)
	res.UpdateTime = time.Since(start)
	res.UpdateCPU, _ = cpuBetween(before, s.sample(ctx))
	res.Updated = updated
	res.UpdateRate = float64(res.Updated) / res.UpdateTime.Seconds()
	if err != nil && ctx.Err() == nil {
		res.UpdateError = err.Error()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	logf("list: updated %d in %v; timing LISTs", res.Updated, res.UpdateTime.Round(time.Millisecond))

	if err := res.timeLists(ctx, c, t, s, c.ListCompression, &res.listKinds); err != nil {
		return nil, err
	}
	if c.ListCompression {
		// The same LISTs uncompressed: what the server does itself, without
		// the gzip both servers spend most of a large LIST's CPU on.
		res.Identity = &listKinds{}
		if err := res.timeLists(ctx, c, t, s, false, res.Identity); err != nil {
			return nil, err
		}
	}
	if c.GetRequests > 0 {
		logf("list: timing %d GETs of each kind", c.GetRequests)
		res.GetRequests = c.GetRequests
		res.Gets, err = timeGets(ctx, t, s, getNames("load-list", c.ListObjects, c.GetRequests, getSeed))
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err != nil {
			res.GetError = err.Error()
			logf("list: GETs: %v", err)
		}
	}
	return res, nil
}

// timeLists times c.ListRepeats LISTs of each kind, in turn, into k; the
// first consistent one gives res's items, bytes and compression.
func (res *listResult) timeLists(ctx context.Context, c *config, t *target, s *sampler, gzip bool, k *listKinds) error {
	var into bytes.Buffer // every LIST's body, read into the same memory
	for i := range c.ListRepeats * 3 {
		// Each LIST starts from a collected client heap. Otherwise the
		// garbage of the one before (a paged traversal's twenty bodies
		// and decodes) is collected during the next, and the RV=0 LIST,
		// which follows the paged one, took 35 to 95 ms where the
		// consistent one took 29 to 52, for the same server CPU.
		runtime.GC()
		before := s.sample(ctx)
		var times *listTimes
		switch i % 3 {
		case 0, 1:
			rv0 := i%3 == 0
			times = &k.Consistent
			if rv0 {
				times = &k.RV0
			}
			d, body, compressed, err := timeList(ctx, t, rv0, gzip, &into)
			if err != nil {
				return err
			}
			times.All = append(times.All, d)
			// Items from a consistent LIST: one with resourceVersion=0
			// may be a little behind the last patch.
			if i == 1 && res.Items == 0 {
				items, err := countItems(body)
				if err != nil {
					return err
				}
				res.Items, res.Compressed = items, compressed
				res.Bytes = len(body)
			}
		case 2:
			times = &k.Paged
			p, err := timePagedList(ctx, t, c.ListPageSize, gzip)
			if err != nil {
				return err
			}
			times.All = append(times.All, p.took)
			res.Pages, res.PagedItems = p.pages, p.items
		}
		if span, ok := cpuBetween(before, s.sample(ctx)); ok {
			times.CPU.add(span)
		}
	}
	if res.PagedItems != res.Items {
		return fmt.Errorf("paged LIST returned %d items in %d pages, the whole LIST %d", res.PagedItems, res.Pages, res.Items)
	}
	for _, times := range []*listTimes{&k.RV0, &k.Consistent, &k.Paged} {
		times.Median = accounting.Median(append([]time.Duration(nil), times.All...))
	}
	return nil
}

// timeList times one LIST from request to the last byte of the body,
// which it reads into into (reset first) and returns as into's bytes. A
// buffer kept from one LIST to the next is already large enough: read
// with io.ReadAll, which grows a new one by doubling, a 15 MiB body took
// the client 20 ms more (median) and up to 140 ms, whichever the server.
func timeList(ctx context.Context, t *target, rv0, gzip bool, into *bytes.Buffer) (time.Duration, []byte, bool, error) {
	u := t.collection
	if rv0 {
		u += "?resourceVersion=0"
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil, false, err
	}
	req.Header.Set("Accept", "application/json")
	if !gzip {
		req.Header.Set("Accept-Encoding", "identity")
	}
	start := time.Now()
	resp, err := t.plain.Do(req)
	if err != nil {
		return 0, nil, false, err
	}
	defer resp.Body.Close()
	into.Reset()
	_, err = into.ReadFrom(resp.Body)
	d := time.Since(start)
	body := into.Bytes()
	if err != nil {
		return 0, nil, false, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, nil, false, fmt.Errorf("LIST: HTTP %d: %.300s", resp.StatusCode, body)
	}
	return d, body, resp.Uncompressed, nil
}

// patchAll changes the payload of objects prefix-000000 .. n-1 by one JSON
// merge patch each, with workers concurrent writers, and returns how many
// succeeded.
func patchAll(ctx context.Context, t *target, objs *objectFactory, prefix string, n, workers int) (int64, error) {
	body, err := objs.payloadPatch("updated")
	if err != nil {
		return 0, err
	}
	return eachObject(ctx, prefix, n, workers, "patch", func(name string) (bool, error) {
		_, err := t.writer.Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{})
		return err == nil, err
	})
}
