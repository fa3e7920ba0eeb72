package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"
)

// scaleResult is the scale scenario (issue 39): the namespace grown step
// by step to each --scale-objects count and measured there, steps in
// order.
type scaleResult struct {
	Steps []scaleStep `json:"steps"`
}

// scaleStep is the namespace grown to Objects and what was measured at
// that count. The parts are the other scenarios' own: a part that fails
// is recorded in Errors and the next one still runs.
type scaleStep struct {
	Objects int `json:"objects"`
	// List holds the step's creates (the objects missing before it only:
	// Created, CreateTime, CreateRate, CreateCPU), then the LIST times and
	// the GETs, as the list scenario times them; no patches.
	List *listResult `json:"list,omitempty"`
	// Memory once the creates are done, before any LIST: RSS of the
	// --pid processes summed and each (in --pid order), and the heap in
	// use from /metrics (go_memstats_heap_inuse_bytes; 0 where the server
	// exports none).
	Memory scaleMemory `json:"memory"`
	// EtcdDBBytes is the size of --scale-etcd-db then; -1 when none was
	// given or it could not be read.
	EtcdDBBytes int64              `json:"etcdDBBytes"`
	Informer    *informerResult    `json:"informer,omitempty"`
	Fanout      []fanoutResult     `json:"fanoutRounds,omitempty"`
	Restart     *scaleRestartTimes `json:"restart,omitempty"`
	// Errors name the parts that failed, with why.
	Errors map[string]string `json:"errors,omitempty"`
}

// scaleMemory is the server's memory at one moment.
type scaleMemory struct {
	RSSKiB           int64   `json:"rssKiB"`
	PerProcessRSSKiB []int64 `json:"perProcessRSSKiB,omitempty"`
	HeapInuseBytes   int64   `json:"heapInuseBytes"`
}

func memoryOf(s serverSample) scaleMemory {
	return scaleMemory{RSSKiB: s.RSSKiB, PerProcessRSSKiB: s.PerProcessRSSKiB, HeapInuseBytes: s.HeapInuse}
}

// fail records that part of the step failed.
func (st *scaleStep) fail(part string, err error) {
	if st.Errors == nil {
		st.Errors = map[string]string{}
	}
	st.Errors[part] = err.Error()
}

// name identifies the step in logs and failures.
func (st *scaleStep) name() string { return fmt.Sprintf("scale %d", st.Objects) }

// runScale grows the namespace's load-list objects to each count in turn,
// creating only the difference, and measures each step. A restart
// replaces the server's processes and perhaps its port, so it returns the
// target and sampler of the server as it is after the last step. Only
// what makes the later steps meaningless ends it early: creates that
// fail, or a server that does not come back.
func runScale(ctx context.Context, c *config, t *target, objs *objectFactory, s *sampler, logf logFunc) (*scaleResult, *target, *sampler, error) {
	res := &scaleResult{}
	present := 0
	for _, n := range c.ScaleObjects {
		if err := ctx.Err(); err != nil {
			return res, t, s, err
		}
		st := scaleStep{Objects: n, EtcdDBBytes: -1}
		var err error
		t, s, err = measureScaleStep(ctx, c, t, objs, s, present, &st, logf)
		res.Steps = append(res.Steps, st)
		if err != nil {
			return res, t, s, fmt.Errorf("%s: %w", st.name(), err)
		}
		present = n
	}
	return res, t, s, nil
}

// measureScaleStep fills st: creates from present up to st.Objects, then
// memory and storage, LISTs, GETs, informer syncs, the fan-out rounds and
// a restart, in that order (memory first, before LISTs and syncs leave
// garbage behind).
func measureScaleStep(ctx context.Context, c *config, t *target, objs *objectFactory, s *sampler, present int, st *scaleStep, logf logFunc) (*target, *sampler, error) {
	n := st.Objects
	l := &listResult{Objects: n, Creators: c.ListCreators, PageSize: c.ListPageSize}
	st.List = l
	logf("%s: creating objects %d..%d with %d creators", st.name(), present, n-1, c.ListCreators)
	before := s.sample(ctx)
	start := time.Now()
	created, err := createMissingFrom(ctx, t, objs, "load-list", present, n, c.ListCreators)
	l.CreateTime = time.Since(start)
	l.CreateCPU, _ = cpuBetween(before, s.sample(ctx))
	l.Created = created
	l.CreateRate = float64(created) / l.CreateTime.Seconds()
	if err != nil {
		l.CreateError = err.Error()
		return t, s, fmt.Errorf("create: %w", err)
	}
	logf("%s: created %d in %v (%.0f/s)", st.name(), created, l.CreateTime.Round(time.Millisecond), l.CreateRate)

	st.Memory = memoryOf(s.sample(ctx))
	st.EtcdDBBytes = fileSize(c.ScaleEtcdDB)
	logf("%s: RSS %d MiB, heap in use %d MiB, storage file %d MiB", st.name(), st.Memory.RSSKiB/1024, st.Memory.HeapInuseBytes>>20, st.EtcdDBBytes>>20)

	if err := l.timeLists(ctx, c, t, s, c.ListCompression, &l.listKinds); err != nil {
		st.fail("list", err)
		logf("%s: LISTs: FAILED: %v", st.name(), err)
	} else {
		logf("%s: LIST medians: RV=0 %s, consistent %s, paged by %d %s", st.name(), ms(l.RV0.Median), ms(l.Consistent.Median), l.PageSize, ms(l.Paged.Median))
	}
	if c.GetRequests > 0 {
		l.GetRequests = c.GetRequests
		if l.Gets, err = timeGets(ctx, t, s, getNames("load-list", n, c.GetRequests, getSeed)); err != nil {
			l.GetError = err.Error()
			st.fail("get", err)
		}
	}

	if len(c.ScaleInformerFormats) > 0 {
		ic := *c
		ic.InformerObjects, ic.InformerFormats = []int{n}, c.ScaleInformerFormats
		st.Informer, err = runInformer(ctx, &ic, t, objs, s, n, logf)
		if err != nil {
			st.fail("informer", err)
		}
		if st.Informer != nil {
			for _, round := range st.Informer.Rounds {
				if round.Error != "" && !round.NotServed {
					st.fail(round.name(), fmt.Errorf("%s", round.Error))
				}
			}
		}
	}

	for _, round := range c.fanoutRounds() {
		if ctx.Err() != nil {
			break
		}
		f, err := runFanout(ctx, c, t, objs, s, round, logf)
		if f != nil {
			st.Fanout = append(st.Fanout, *f)
		}
		if err != nil {
			st.fail(round.name(), err)
		}
	}

	if c.ScaleStart == "" {
		return t, s, ctx.Err()
	}
	rs, nt, ns, err := restartServer(ctx, c, n, logf)
	st.Restart = rs
	if err != nil {
		st.fail("restart", err)
		return t, s, fmt.Errorf("restart: %w", err)
	}
	return nt, ns, nil
}

// fileSize is path's size in bytes; -1 without a path or a readable file.
func fileSize(path string) int64 {
	if path == "" {
		return -1
	}
	fi, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return fi.Size()
}

// scaleRows are the lines of the printed summary: one heading and a few
// lines per step.
func scaleRows(sc *scaleResult) [][2]string {
	var rows [][2]string
	for i := range sc.Steps {
		st := &sc.Steps[i]
		key := "  " + st.name()
		head := fmt.Sprintf("%d objects", st.Objects)
		if l := st.List; l != nil {
			head += fmt.Sprintf(", %d created at %.0f/s", l.Created, l.CreateRate)
		}
		head += fmt.Sprintf("; RSS %d MiB, heap in use %d MiB", st.Memory.RSSKiB/1024, st.Memory.HeapInuseBytes>>20)
		if st.EtcdDBBytes >= 0 {
			head += fmt.Sprintf(", storage file %d MiB", st.EtcdDBBytes>>20)
		}
		rows = append(rows, [2]string{key, head})
		if l := st.List; l != nil && l.Items > 0 {
			rows = append(rows, [2]string{"    LIST", fmt.Sprintf("%d items: RV=0 %s  consistent %s  paged by %d (%d pages) %s",
				l.Items, ms(l.RV0.Median), ms(l.Consistent.Median), l.PageSize, l.Pages, ms(l.Paged.Median))})
		}
		if g := st.List.gets(); g != nil {
			rows = append(rows, [2]string{"    GET", fmt.Sprintf("consistent p50 %s p99 %s   RV=0 p50 %s p99 %s",
				us(g.Consistent.Latency.P50), us(g.Consistent.Latency.P99), us(g.RV0.Latency.P50), us(g.RV0.Latency.P99))})
		}
		if st.Informer != nil {
			for _, r := range st.Informer.Rounds {
				if r.Error == "" && len(r.All) > 0 {
					rows = append(rows, [2]string{"    informer " + r.Format + " " + r.mode(), fmt.Sprintf("%d items: %s", r.Items, ms(r.Median))})
				}
			}
		}
		for _, f := range st.Fanout {
			rows = append(rows, [2]string{"    " + f.round().name(), fmt.Sprintf("write→all p50 %s p99 %s", ms(f.Events.AllReceived.P50), ms(f.Events.AllReceived.P99))})
		}
		if r := st.Restart; r != nil && r.Error == "" {
			rows = append(rows, [2]string{"    restart", fmt.Sprintf("stop %s; start → /readyz %s, → full LIST RV=0 %s; then RSS %d MiB, heap in use %d MiB",
				ms(r.StopTime), ms(r.ReadyzTime), ms(r.ReadyTime), r.Memory.RSSKiB/1024, r.Memory.HeapInuseBytes>>20)})
		}
		for _, part := range sortedKeys(st.Errors) {
			rows = append(rows, [2]string{"    FAILED " + part, st.Errors[part]})
		}
	}
	if len(rows) > 0 {
		rows = append([][2]string{{"scale", "namespace grown step by step; figures at each count"}}, rows...)
	}
	return rows
}

// gets is l's GETs, nil-safe.
func (l *listResult) gets() *getKinds {
	if l == nil {
		return nil
	}
	return l.Gets
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
