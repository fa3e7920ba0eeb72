package history

import (
	"errors"
	"net/http"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// History is everything a Recorder recorded, as plain data for the
// checkers.
type History struct {
	Operations []Operation
	Streams    []Stream
	Informers  []InformerState
}

// Recorder records operations, watch streams and informer states. It is
// safe for concurrent use by every client of a scenario.
type Recorder struct {
	// now is the monotonic clock of call and return times. Immutable.
	now func() time.Duration

	// mu guards everything below.
	mu        sync.Mutex
	ops       []Operation
	streams   []Stream
	informers []InformerState
}

// Option configures a Recorder.
type Option func(*Recorder)

// WithClock replaces the recorder's clock (time since the recorder was
// made, read from the monotonic clock) with now, for simulated histories.
// now must never go backwards.
func WithClock(now func() time.Duration) Option {
	return func(r *Recorder) { r.now = now }
}

// NewRecorder returns an empty recorder.
func NewRecorder(opts ...Option) *Recorder {
	start := time.Now()
	r := &Recorder{now: func() time.Duration { return time.Since(start) }}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Call is an operation in flight; Return or Finish ends it.
type Call struct {
	r  *Recorder
	id int
}

// ID is the operation's id, the one the checkers' reports name; a client
// writes it into the value it writes (see the package doc).
func (c *Call) ID() int { return c.id }

// Call records that client is calling req, and returns the handle with
// which to record the return. Call it just before sending the request.
func (r *Recorder) Call(client int, req Request) *Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := len(r.ops) + 1
	r.ops = append(r.ops, Operation{ID: id, Client: client, Request: req, Call: r.now(), Outcome: Pending})
	return &Call{r: r, id: id}
}

// Return records the server's answer: resp on success (err nil), or err,
// classified by Classify; a get's 404 is a successful read of no object.
// Call it as soon as the answer (or the error) is in.
func (c *Call) Return(resp Response, err error) {
	outcome := Acknowledged
	if err != nil {
		outcome, resp.Code, resp.Reason = Classify(err)
		resp.Err = err.Error()
		c.r.mu.Lock()
		isGet := c.r.ops[c.id-1].Kind == Get
		c.r.mu.Unlock()
		if isGet && resp.Code == http.StatusNotFound {
			outcome, resp.Found = Acknowledged, false
		}
	}
	c.Finish(outcome, resp)
}

// Finish records the operation's outcome as given, for clients that
// classify answers themselves and for simulators.
func (c *Call) Finish(outcome Outcome, resp Response) {
	r := c.r
	r.mu.Lock()
	defer r.mu.Unlock()
	op := &r.ops[c.id-1]
	op.Return = r.now()
	op.Outcome = outcome
	op.Response = resp
}

// Classify says what an error answer means for whether the operation
// happened, and gives its HTTP code and Status reason when it is a
// Status. A Status with a 4xx code says the request was refused and
// changed nothing; 5xx (500 internal error, 503, 504 timeout) and errors
// without a Status (timeouts, connections lost) leave it unknown.
func Classify(err error) (outcome Outcome, code int, reason string) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return Unknown, 0, ""
	}
	s := status.Status()
	code, reason = int(s.Code), string(s.Reason)
	if code >= 400 && code < 500 {
		return Failed, code, reason
	}
	return Unknown, code, reason
}

// StreamRecorder records one watch stream's events.
type StreamRecorder struct {
	r  *Recorder
	id int
}

// ID is the stream's id, for Stream.Resumes of a stream that resumes it.
func (s *StreamRecorder) ID() int { return s.id }

// Watch records that client opened a watch on the keys under prefix from
// startRV; resumes is the id of the stream it resumes, or 0.
func (r *Recorder) Watch(client int, prefix string, startRV int64, resumes int) *StreamRecorder {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := len(r.streams) + 1
	r.streams = append(r.streams, Stream{ID: id, Client: client, Prefix: prefix, StartRV: startRV, Resumes: resumes})
	return &StreamRecorder{r: r, id: id}
}

// Observe records an event the stream received, in the order received.
func (s *StreamRecorder) Observe(e Event) {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	st := &s.r.streams[s.id-1]
	st.Events = append(st.Events, e)
}

// End records how the stream ended.
func (s *StreamRecorder) End(reason EndReason, err error) {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	st := &s.r.streams[s.id-1]
	st.End = reason
	if err != nil {
		st.Err = err.Error()
	}
}

// Informer records an informer's final store.
func (r *Recorder) Informer(state InformerState) {
	items := make(map[string]Item, len(state.Items))
	for k, v := range state.Items {
		items[k] = v
	}
	state.Items = items
	r.mu.Lock()
	defer r.mu.Unlock()
	r.informers = append(r.informers, state)
}

// History returns a copy of everything recorded so far.
func (r *Recorder) History() History {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := History{
		Operations: make([]Operation, len(r.ops)),
		Streams:    make([]Stream, len(r.streams)),
		Informers:  append([]InformerState(nil), r.informers...),
	}
	for i, op := range r.ops {
		op.Items = append([]Item(nil), op.Items...)
		h.Operations[i] = op
	}
	for i, s := range r.streams {
		s.Events = append([]Event(nil), s.Events...)
		h.Streams[i] = s
	}
	return h
}
