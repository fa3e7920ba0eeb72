package sim

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/apiloom/apiloom/test/robustness/check"
	"github.com/apiloom/apiloom/test/robustness/history"
)

// Bug is a bug a run plants.
type Bug int

const (
	NoBug Bug = iota
	// DropWatchEvent: one watch stream skips one event that is followed
	// by another event or a bookmark.
	DropWatchEvent
	// AckWithoutCommit: one create or update is acknowledged with the
	// next revision but never committed.
	AckWithoutCommit
	// StaleRead: one consistent get returns the key's previous value,
	// although the write that replaced it returned before the get began.
	StaleRead
	// InformerMissesDelete: one informer misses the delete that removed a
	// key for good.
	InformerMissesDelete
	// TornList: one list answer lacks one of the objects etcd held at its
	// revision.
	TornList
	// StaleReplicaRead: one consistent list served by one replica answers
	// the state just before a write that the other replica acknowledged
	// before the list was called (a replica serving consistent reads from
	// a cache that lags). The answer is a state etcd had.
	StaleReplicaRead
)

// Replicas is how many replicas the clients spread over: client i sends
// to replica i % Replicas.
const Replicas = 2

// Config is a run's shape.
type Config struct {
	Seed int64
	// Clients run operations concurrently, one at a time each.
	Clients int
	// Ops is how many operations the clients run in all.
	Ops int
	// Keys are the object keys the clients use.
	Keys []string
	// Lost is the probability that an operation's answer is lost (before
	// or after the store applied it): its outcome is unknown.
	Lost float64
	// Applies is the percentage (at most 30) of operations that are
	// forced server-side applies instead of updates; 0 keeps the mix the
	// planted-bug tests were tuned on.
	Applies int
	// Streams and Informers are how many of each the run records.
	Streams, Informers int
	Bug                Bug
}

func (c *Config) defaults() {
	if c.Clients == 0 {
		c.Clients = 4
	}
	if c.Ops == 0 {
		c.Ops = 200
	}
	if c.Keys == nil {
		c.Keys = []string{"a/0", "a/1", "b/0"}
	}
	if c.Streams == 0 {
		c.Streams = 6
	}
	if c.Informers == 0 {
		c.Informers = 2
	}
}

// Planted says where a run planted its bug.
type Planted struct {
	Done bool
	// Op is the operation the bug concerns (the unacknowledged write, the
	// stale read, the writer of the event or delete missed), or 0.
	Op int
	// Stream is the stream that dropped an event, or 0.
	Stream int
	Key    string
	Rev    int64
}

// Result is a run's history, etcd's view of it and where the bug is.
type Result struct {
	History history.History
	Etcd    check.Etcd
	Planted Planted
}

type phase int

const (
	idle phase = iota
	called
	applied
)

type client struct {
	id      int
	phase   phase
	call    *history.Call
	req     history.Request
	callSeq int
	outcome history.Outcome
	resp    history.Response
	mustAck bool // the planted bug's answer must arrive
	// known is the last revision the client saw of each key.
	known map[string]int64
}

// sim is one run's state.
type sim struct {
	cfg     Config
	rnd     *rand.Rand
	rec     *history.Recorder
	st      *store
	seq     int // the logical clock, one tick per recorded call or return
	planted Planted
	// returnSeq is when each acknowledged write returned.
	returnSeq map[int]int
	// acked are the acknowledged writes, in the order they returned.
	acked  []history.Operation
	values int
}

// Run runs the clients and returns the history.
func Run(cfg Config) Result {
	cfg.defaults()
	s := &sim{cfg: cfg, rnd: rand.New(rand.NewPCG(uint64(cfg.Seed), 17)), st: newStore(), returnSeq: map[int]int{}}
	s.rec = history.NewRecorder(history.WithClock(func() time.Duration { s.seq++; return time.Duration(s.seq) }))
	clients := make([]*client, cfg.Clients)
	for i := range clients {
		clients[i] = &client{id: i, known: map[string]int64{}}
	}
	started := 0
	for {
		busy := false
		for _, c := range clients {
			busy = busy || c.phase != idle
		}
		if !busy && started >= cfg.Ops {
			break
		}
		c := clients[s.rnd.IntN(len(clients))]
		switch c.phase {
		case idle:
			if started < cfg.Ops {
				s.start(c)
				started++
			}
		case called:
			if s.rnd.Float64() < cfg.Lost/2 {
				c.call.Finish(history.Unknown, history.Response{Err: "connection lost before the request arrived"})
				c.phase = idle
				continue
			}
			s.apply(c, started)
		case applied:
			s.finish(c)
		}
	}
	compact := s.st.rev / 2
	s.streams(compact)
	s.informers()
	return Result{
		History: s.rec.History(),
		Etcd:    check.Etcd{Changes: s.st.changes, FirstRev: 1, CompactRev: compact},
		Planted: s.planted,
	}
}

func (s *sim) start(c *client) {
	key := s.cfg.Keys[s.rnd.IntN(len(s.cfg.Keys))]
	req := history.Request{Key: key}
	switch n := s.rnd.IntN(100); {
	case n < 20:
		req.Kind = history.Create
	case n < 20+s.cfg.Applies:
		req.Kind = history.Apply
	case n < 50:
		req.Kind = history.Update
	case n < 60:
		req.Kind = history.Delete
	case n < 85:
		req.Kind = history.Get
	default:
		req.Kind = history.List
		req.Key = []string{"", "a/", "b/"}[s.rnd.IntN(3)]
	}
	req.Replica = c.id % Replicas
	switch req.Kind {
	case history.Create, history.Update, history.Apply:
		s.values++
		req.Value = fmt.Sprintf("w%d", s.values)
	case history.Get, history.List:
		if s.rnd.IntN(10) == 0 {
			req.ReadRV = "0"
		}
	}
	if req.Kind == history.Update || req.Kind == history.Delete {
		switch n := s.rnd.IntN(10); {
		case n < 6:
			req.PreconditionRV = c.known[key]
		case n < 7:
			req.PreconditionRV = c.known[key] + 1000
		}
	}
	c.req, c.phase, c.mustAck = req, called, false
	c.callSeq = s.seq + 1
	c.call = s.rec.Call(c.id, req)
}

// apply is the operation's linearization point.
func (s *sim) apply(c *client, started int) {
	c.phase = applied
	switch c.req.Kind {
	case history.Get:
		c.outcome, c.resp = history.Acknowledged, s.st.get(c.req.Key)
		if s.cfg.Bug == StaleRead && !s.planted.Done && c.req.ReadRV == "" {
			s.plantStaleRead(c)
		}
	case history.List:
		c.outcome, c.resp = history.Acknowledged, s.st.list(c.req.Key)
		if s.cfg.Bug == TornList && !s.planted.Done && len(c.resp.Items) > 1 {
			i := s.rnd.IntN(len(c.resp.Items))
			it := c.resp.Items[i]
			c.resp.Items = append(c.resp.Items[:i:i], c.resp.Items[i+1:]...)
			c.mustAck = true
			s.planted = Planted{Done: true, Op: c.call.ID(), Key: it.Key, Rev: c.resp.RV}
		}
		if s.cfg.Bug == StaleReplicaRead && !s.planted.Done && c.req.ReadRV == "" {
			s.plantStaleReplicaRead(c)
		}
	default:
		commit := true
		if s.cfg.Bug == AckWithoutCommit && !s.planted.Done && started > s.cfg.Ops/3 && c.req.Kind != history.Delete {
			if o, _ := s.st.write(c.call.ID(), c.req, false); o == history.Acknowledged {
				commit = false
				s.planted = Planted{Done: true, Op: c.call.ID(), Key: c.req.Key, Rev: s.st.rev + 1}
				c.mustAck = true
			}
		}
		c.outcome, c.resp = s.st.write(c.call.ID(), c.req, commit)
	}
}

// plantStaleRead answers the get with the key's previous value when the
// write of its current value returned before the get was called.
func (s *sim) plantStaleRead(c *client) {
	vs := s.st.versions[c.req.Key]
	cur, exists := s.st.state[c.req.Key]
	if len(vs) < 2 || !exists || vs[len(vs)-1].item != cur {
		return
	}
	ret, ok := s.returnSeq[vs[len(vs)-1].op]
	if !ok || ret >= c.callSeq {
		return
	}
	prev := vs[len(vs)-2].item
	c.resp = history.Response{Found: true, Read: prev.Value, RV: prev.RV}
	c.mustAck = true
	s.planted = Planted{Done: true, Op: c.call.ID(), Key: c.req.Key, Rev: prev.RV}
}

// plantStaleReplicaRead answers the list with the state just before the
// latest write under its prefix that the other replica acknowledged
// before the list was called.
func (s *sim) plantStaleReplicaRead(c *client) {
	var w *history.Operation
	for i := range s.acked {
		a := &s.acked[i]
		if a.Replica != c.req.Replica && s.returnSeq[a.ID] < c.callSeq && strings.HasPrefix(a.Key, c.req.Key) && (w == nil || a.RV > w.RV) {
			w = a
		}
	}
	if w == nil || w.RV < 2 {
		return
	}
	state := s.st.stateAt(w.RV-1, c.req.Key)
	items := make([]history.Item, 0, len(state))
	for _, it := range state {
		items = append(items, it)
	}
	sort.Slice(items, func(i, j int) bool { return items[i].Key < items[j].Key })
	c.resp = history.Response{Items: items, RV: w.RV - 1}
	c.mustAck = true
	s.planted = Planted{Done: true, Op: c.call.ID(), Key: w.Key, Rev: w.RV}
}

func (s *sim) finish(c *client) {
	c.phase = idle
	if !c.mustAck && s.rnd.Float64() < s.cfg.Lost/2 {
		c.call.Finish(history.Unknown, history.Response{Code: 504, Reason: "Timeout", Err: "the answer was lost"})
		return
	}
	resp, outcome := c.resp, c.outcome
	if c.req.Kind == history.Get && resp.Code == 404 {
		outcome = history.Acknowledged
	}
	c.call.Finish(outcome, resp)
	if outcome != history.Acknowledged {
		return
	}
	if c.req.Kind.IsWrite() {
		s.returnSeq[c.call.ID()] = s.seq
		s.acked = append(s.acked, history.Operation{ID: c.call.ID(), Request: c.req, Response: resp})
	}
	switch c.req.Kind {
	case history.Create, history.Update, history.Apply:
		c.known[c.req.Key] = resp.RV
	case history.Delete:
		c.known[c.req.Key] = 0
	case history.Get:
		c.known[c.req.Key] = resp.RV
	}
}
