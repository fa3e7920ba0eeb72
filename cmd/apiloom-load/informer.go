package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/transport"

	"github.com/apiloom/apiloom/cmd/apiloom-load/internal/accounting"
	"github.com/apiloom/apiloom/cmd/apiloom-load/internal/procfs"
)

// Formats the informer scenario knows.
const (
	formatJSON = "json"
	formatCBOR = "cbor"
	// formatProtobuf is the generated clientset's informer in protobuf:
	// client-go's dynamic client has no protobuf.
	formatProtobuf = "protobuf"
)

// informerResult is the outcome of the informer scenario: one round per
// object count, format and mode, in the order they ran.
type informerResult struct {
	Repeats int             `json:"repeats"`
	Rounds  []informerRound `json:"rounds"`
}

// informerRound is Repeats syncs of a new informer with one setting.
type informerRound struct {
	// Objects is how many load-list objects the namespace was made to
	// hold; Items is how many the informer's store held once synced (the
	// namespace may hold more: other scenarios' objects, a larger list).
	Objects int    `json:"objects"`
	Items   int    `json:"items"`
	Format  string `json:"format"`
	// WatchList is client-go's WatchListClient gate: one watch with
	// sendInitialEvents=true instead of a LIST and then a watch.
	WatchList bool `json:"watchList"`
	// Median and All are the times from starting the informer until
	// HasSynced.
	Median time.Duration   `json:"median"`
	All    []time.Duration `json:"all"`
	// CPU is the measured processes' CPU over all the round's syncs;
	// RSSBeforeKiB their RSS before the first, PeakRSSKiB the highest
	// RSS sampled during any.
	CPU          cpuSpan `json:"cpu"`
	RSSBeforeKiB int64   `json:"rssBeforeKiB,omitempty"`
	PeakRSSKiB   int64   `json:"peakRSSKiB,omitempty"`
	// Requests counts what client-go asked for, by kind (LIST, WATCH,
	// WATCHLIST), and ContentTypes are the media types of the answers, so
	// that a round shows whether it really used watch-list and CBOR.
	Requests     map[string]int `json:"requests,omitempty"`
	ContentTypes []string       `json:"contentTypes,omitempty"`
	Error        string         `json:"error,omitempty"`
	// NotServed is set when the only problem was that the server answered
	// in another format: it does not serve this one.
	NotServed bool `json:"notServed,omitempty"`
}

// errFormatNotServed is a round whose answers came in another format.
var errFormatNotServed = errors.New("format not served")

// mode names how the informer fetched its initial state.
func (r *informerRound) mode() string {
	if r.WatchList {
		return "watch-list"
	}
	return "list+watch"
}

// name identifies the round in failures and tables.
func (r *informerRound) name() string {
	return fmt.Sprintf("informer %d %s %s", r.Objects, r.Format, r.mode())
}

// cpuPerSync is the mean server CPU of one sync.
func (r *informerRound) cpuPerSync() time.Duration {
	if len(r.All) == 0 {
		return 0
	}
	return r.CPU.Total / time.Duration(len(r.All))
}

// informerGates are the client-go gates of a round: watch-list on or off,
// CBOR allowed and preferred for the cbor format only (protobuf is chosen
// by the client's content types, not by a gate).
func informerGates(format string, watchList bool) map[clientfeatures.Feature]bool {
	cbor := format == formatCBOR
	return map[clientfeatures.Feature]bool{
		clientfeatures.WatchListClient:   watchList,
		clientfeatures.ClientsAllowCBOR:  cbor,
		clientfeatures.ClientsPreferCBOR: cbor,
	}
}

// runInformer makes the namespace hold each configured number of objects
// (the list scenario's, created when missing, skipping the first present
// ones), then for each format, with watch-list off and on, times
// InformerRepeats syncs of a new informer over the namespace: client-go's
// dynamic informer for json and cbor, the generated clientset's for
// protobuf. A round that fails is recorded in it and the next one runs.
func runInformer(ctx context.Context, c *config, t *target, objs *objectFactory, s *sampler, present int, logf logFunc) (*informerResult, error) {
	g := installClientGates()
	res := &informerResult{Repeats: c.InformerRepeats}
	counts := slices.Clone(c.InformerObjects)
	slices.Sort(counts)
	for _, n := range counts {
		if n > present {
			logf("informer: creating objects up to %d with %d creators", n, c.ListCreators)
			if _, err := createMissing(ctx, t, objs, "load-list", n, c.ListCreators); err != nil {
				return res, fmt.Errorf("create %d objects: %w", n, err)
			}
			present = n
		}
		for _, format := range c.InformerFormats {
			for _, watchList := range []bool{false, true} {
				if err := ctx.Err(); err != nil {
					return res, err
				}
				round := informerRound{Objects: n, Format: format, WatchList: watchList}
				restore := g.set(informerGates(format, watchList))
				err := syncRound(ctx, t, s, &round, c.InformerRepeats)
				restore()
				switch {
				case errors.Is(err, errFormatNotServed):
					round.Error, round.NotServed = err.Error(), true
					logf("%s: not served: %v", round.name(), err)
				case err != nil:
					round.Error = err.Error()
					logf("%s: FAILED: %v", round.name(), err)
				default:
					logf("%s: %d items, median %v of %d, server CPU %.2fs/sync, peak RSS %d MiB",
						round.name(), round.Items, round.Median.Round(time.Millisecond), len(round.All),
						round.cpuPerSync().Seconds(), round.PeakRSSKiB/1024)
				}
				res.Rounds = append(res.Rounds, round)
			}
		}
	}
	return res, nil
}

// syncRound fills round with repeats syncs. A protobuf round over a
// resource the load tool has no Go types for asks the server once whether
// it serves it in protobuf and ends there: not served (the answer is
// recorded), or a failure.
func syncRound(ctx context.Context, t *target, s *sampler, round *informerRound, repeats int) error {
	rec := newRequestRecorder()
	build := dynamicInformer(t.gvr)
	if round.Format == formatProtobuf {
		var ok bool
		if build, ok = protobufInformer(t.gvr); !ok {
			cfg := t.freshConfig()
			cfg.Wrap(rec.wrap)
			hc, err := rest.HTTPClientFor(cfg)
			if err != nil {
				return err
			}
			defer utilnet.CloseIdleConnectionsFor(hc.Transport)
			err = probeProtobuf(ctx, hc, t.collection, t.gvr)
			round.Requests, round.ContentTypes = rec.summary()
			return err
		}
	}
	before := s.sample(ctx)
	round.RSSBeforeKiB = before.RSSKiB
	for range repeats {
		peak := watchPeakRSS(s.pids, 20*time.Millisecond)
		d, items, err := syncOnce(ctx, t, rec, build)
		round.PeakRSSKiB = max(round.PeakRSSKiB, peak())
		if err != nil {
			return err
		}
		if items < round.Objects {
			return fmt.Errorf("%w: the informer synced %d items, the namespace holds at least %d", errInformer, items, round.Objects)
		}
		round.All = append(round.All, d)
		round.Items = items
	}
	if span, ok := cpuBetween(before, s.sample(ctx)); ok {
		round.CPU = span
	}
	round.Median = accounting.Median(slices.Clone(round.All))
	round.Requests, round.ContentTypes = rec.summary()
	return rec.check(round.Format, round.WatchList)
}

var errInformer = errors.New("informer")

// syncOnce starts a new informer made by build, over a connection of its
// own, and returns the time until HasSynced and the number of items it
// holds then. An error from the informer's list or watch ends it at once
// (the reflector would otherwise retry forever).
func syncOnce(ctx context.Context, t *target, rec *requestRecorder, build informerBuilder) (time.Duration, int, error) {
	cfg := t.freshConfig()
	cfg.Wrap(rec.wrap)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return 0, 0, err
	}
	defer utilnet.CloseIdleConnectionsFor(hc.Transport)
	inf, err := build(cfg, hc, t.namespace)
	if err != nil {
		return 0, 0, err
	}
	errc := make(chan error, 1)
	if err := inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		select {
		case errc <- err:
		default:
		}
	}); err != nil {
		return 0, 0, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	start := time.Now()
	wg.Go(func() { inf.RunWithContext(runCtx) })
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !inf.HasSynced() {
		select {
		case <-tick.C:
		case err := <-errc:
			return 0, 0, err
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		}
	}
	took := time.Since(start)
	return took, len(inf.GetStore().ListKeys()), nil
}

// newInformer is client-go's dynamic informer for the namespace, with no
// resync and no indexers.
func newInformer(dc dynamic.Interface, gvr schema.GroupVersionResource, namespace string) cache.SharedIndexInformer {
	return dynamicinformer.NewFilteredDynamicInformer(dc, gvr, namespace, 0, cache.Indexers{}, nil).Informer()
}

// watchPeakRSS samples the processes' summed RSS every interval until the
// returned function is called, which stops the sampling and returns the
// highest RSS seen (0 without processes).
func watchPeakRSS(pids procfs.Group, interval time.Duration) (stop func() int64) {
	if len(pids) == 0 {
		return func() int64 { return 0 }
	}
	var peak int64
	read := func() {
		if sum, _, err := pids.Read(); err == nil {
			peak = max(peak, sum.RSSKiB)
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			read()
			select {
			case <-tick.C:
			case <-done:
				return
			}
		}
	})
	return func() int64 {
		close(done)
		wg.Wait()
		read()
		return peak
	}
}

// compile-time check that the wrapper has client-go's signature.
var _ transport.WrapperFunc = (*requestRecorder)(nil).wrap

// informerRows are the lines of the printed summary: a heading, then one
// line per round.
func informerRows(in *informerResult) [][2]string {
	rows := [][2]string{{"informer", fmt.Sprintf("new informer until HasSynced, median of %d", in.Repeats)}}
	for i := range in.Rounds {
		r := &in.Rounds[i]
		key := fmt.Sprintf("  %d %s %s", r.Objects, r.Format, r.mode())
		if r.NotServed {
			rows = append(rows, [2]string{key, "not served: " + r.Error})
			continue
		}
		if r.Error != "" {
			rows = append(rows, [2]string{key, "failed (see FAILED below)"})
			continue
		}
		rows = append(rows, [2]string{key, fmt.Sprintf("%d items: %s   server CPU %.2fs/sync   RSS %d → peak %d MiB",
			r.Items, ms(r.Median), r.cpuPerSync().Seconds(), r.RSSBeforeKiB/1024, r.PeakRSSKiB/1024)})
	}
	return rows
}
