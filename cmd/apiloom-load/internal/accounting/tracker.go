package accounting

import (
	"sync/atomic"
	"time"
)

// Tracker records which of a fixed set of watchers received which of a
// bounded sequence of writes, and when, so that a run can prove that every
// watcher saw every acknowledged write exactly once and in order, and can
// time each write until its last watcher had it.
//
// Times are nanoseconds since a base the caller chooses (one monotonic
// clock for writer and watchers). Concurrency: Observe for watcher w may
// only be called from one goroutine at a time (the goroutine that owns
// watcher w); Written from one writer goroutine; Delivered from anywhere;
// Report once every Observe and Written call has returned.
type Tracker struct {
	// Immutable after NewTracker.
	watchers []*watcherLog
	// Indexed by write sequence number.
	sent      []atomic.Int64 // write start of an acknowledged write, else -1
	lastRecv  []atomic.Int64 // latest receive time among the watchers
	receivers []atomic.Int32 // distinct watchers that received the write
	delivered atomic.Int64   // first receipts of in-range writes, all watchers
}

// watcherLog is one watcher's record; only that watcher's goroutine
// touches it until Report.
type watcherLog struct {
	seen       []uint64 // bitset over sequence numbers
	lastRV     uint64
	events     int64 // first receipts of in-range writes
	duplicates int64 // a write received again
	outOfOrder int64 // resourceVersion not above the previous event's
	outOfRange int64 // a sequence number the tracker does not cover
}

// NewTracker makes a Tracker for watchers watchers and sequence numbers
// 0..writes-1.
func NewTracker(watchers, writes int) *Tracker {
	t := &Tracker{
		watchers:  make([]*watcherLog, watchers),
		sent:      make([]atomic.Int64, writes),
		lastRecv:  make([]atomic.Int64, writes),
		receivers: make([]atomic.Int32, writes),
	}
	for i := range t.watchers {
		t.watchers[i] = &watcherLog{seen: make([]uint64, (writes+63)/64)}
	}
	for i := range t.sent {
		t.sent[i].Store(-1)
	}
	return t
}

// Watchers is the number of watchers the tracker covers.
func (t *Tracker) Watchers() int { return len(t.watchers) }

// Written records that write seq, started at start, was acknowledged.
// A sequence number out of range is ignored.
func (t *Tracker) Written(seq int, start int64) {
	if seq >= 0 && seq < len(t.sent) {
		t.sent[seq].Store(start)
	}
}

// Observe records that watcher w received, at time at, an event with
// resourceVersion rv (0 if unknown) for write seq; seq < 0 marks an event
// that is not one of the tracked writes, which still takes part in the
// ordering check.
func (t *Tracker) Observe(w int, seq int, rv uint64, at int64) {
	log := t.watchers[w]
	if rv != 0 {
		if rv <= log.lastRV {
			log.outOfOrder++
		} else {
			log.lastRV = rv
		}
	}
	if seq < 0 {
		return
	}
	if seq >= len(t.sent) {
		log.outOfRange++
		return
	}
	word, bit := seq/64, uint64(1)<<(seq%64)
	if log.seen[word]&bit != 0 {
		log.duplicates++
		return
	}
	log.seen[word] |= bit
	log.events++
	t.receivers[seq].Add(1)
	t.delivered.Add(1)
	for {
		prev := t.lastRecv[seq].Load()
		if at <= prev || t.lastRecv[seq].CompareAndSwap(prev, at) {
			break
		}
	}
}

// Delivered is the number of first receipts so far, over all watchers and
// writes; safe to call while the run goes on.
func (t *Tracker) Delivered() int64 { return t.delivered.Load() }

// Report is the outcome of a run. A correct server gives zero Missing,
// Duplicates, OutOfOrder and Unexpected.
type Report struct {
	Watchers int `json:"watchers"`
	// Writes is the number of acknowledged writes.
	Writes int `json:"writes"`
	// Expected is Writes × Watchers: each watcher should see each write once.
	Expected  int64 `json:"expected"`
	Delivered int64 `json:"delivered"`
	// Missing is Expected − Delivered.
	Missing int64 `json:"missing"`
	// Duplicates counts writes a watcher received more than once.
	Duplicates int64 `json:"duplicates"`
	// OutOfOrder counts events whose resourceVersion was not above the
	// previous one on the same watch.
	OutOfOrder int64 `json:"outOfOrder"`
	// Unexpected counts events for writes that were never acknowledged or
	// lie outside the tracked range.
	Unexpected int64 `json:"unexpected"`
	// MaxMissingPerWatcher and MaxDuplicatesPerWatcher are the worst single
	// watcher's figures.
	MaxMissingPerWatcher    int64 `json:"maxMissingPerWatcher"`
	MaxDuplicatesPerWatcher int64 `json:"maxDuplicatesPerWatcher"`
	// WatchersWithGaps counts watchers that missed at least one write.
	WatchersWithGaps int `json:"watchersWithGaps"`
	// Incomplete counts acknowledged writes some watcher never received;
	// they are left out of AllReceived.
	Incomplete int `json:"incomplete"`
	// AllReceived is, per write that every watcher received, the time from
	// the write's start until the last watcher received it.
	AllReceived Latencies `json:"allReceived"`
}

// Report adds up the run. Call it only after every Observe and Written
// call has returned.
func (t *Tracker) Report() Report {
	r := Report{Watchers: len(t.watchers)}
	var lat []time.Duration
	for seq := range t.sent {
		start := t.sent[seq].Load()
		got := int64(t.receivers[seq].Load())
		if start < 0 {
			r.Unexpected += got
			continue
		}
		r.Writes++
		r.Delivered += got
		if got < int64(len(t.watchers)) {
			r.Incomplete++
			continue
		}
		lat = append(lat, time.Duration(t.lastRecv[seq].Load()-start))
	}
	r.Expected = int64(r.Writes) * int64(len(t.watchers))
	r.Missing = r.Expected - r.Delivered
	for _, log := range t.watchers {
		r.Duplicates += log.duplicates
		r.OutOfOrder += log.outOfOrder
		r.Unexpected += log.outOfRange
		r.MaxDuplicatesPerWatcher = max(r.MaxDuplicatesPerWatcher, log.duplicates)
		var missing int64
		for seq := range t.sent {
			if t.sent[seq].Load() >= 0 && log.seen[seq/64]&(1<<(seq%64)) == 0 {
				missing++
			}
		}
		if missing > 0 {
			r.WatchersWithGaps++
		}
		r.MaxMissingPerWatcher = max(r.MaxMissingPerWatcher, missing)
	}
	r.AllReceived = Summarize(lat)
	return r
}
