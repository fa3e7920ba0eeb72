// Package traffic drives the robustness scenarios' clients: writers doing
// creates, preconditioned updates and deletes and forced server-side
// applies of example.apiloom.dev Databases through every replica, each
// write tagged with an operation id and its outcome recorded; readers
// doing consistent gets and lists on every replica; watchers that list,
// watch, resume and relist, recording every event they receive; and the
// generated shared informers, one per replica.
package traffic

import (
	"errors"
	"sync"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apiloom/apiloom/test/robustness/history"
)

// OpIDAnnotation carries the id of the write that produced an object
// version, so the checkers can find each acknowledged write in etcd.
const OpIDAnnotation = "robustness.apiloom.dev/op-id"

// Outcome is what the client knows of a write.
type Outcome int

const (
	// Acknowledged: the server answered success; the write must be durable.
	Acknowledged Outcome = iota
	// Failed: the server refused it (or it never left the client); it must
	// not have happened.
	Failed
	// Unknown: timed out, connection lost, or a 5xx: it may or may not
	// have happened.
	Unknown
)

func (o Outcome) String() string {
	return [...]string{"acknowledged", "failed", "unknown"}[o]
}

// Kind is the operation's verb.
type Kind string

const (
	Create Kind = "create"
	Update Kind = "update"
	Delete Kind = "delete"
	// Apply is a server-side apply (field manager ApplyFieldManager,
	// force): creates or updates, no precondition.
	Apply Kind = "apply"
	// Get and List are consistent reads (resourceVersion "").
	Get  Kind = "get"
	List Kind = "list"
)

// Op is one write or consistent read as its client saw it.
type Op struct {
	ID      string
	Kind    Kind
	Client  int
	Replica int
	Name    string
	// Precondition is the resourceVersion an update or delete required.
	Precondition string
	Call, Return time.Time
	Outcome      Outcome
	// ResourceVersion of the object an acknowledged create, update or
	// apply returned, or a get read; a list's resourceVersion.
	ResourceVersion string
	// Found and Read: whether an acknowledged get found the object, and
	// its OpIDAnnotation.
	Found bool
	Read  string
	// Items are what an acknowledged list read: each object's name, its
	// OpIDAnnotation as value and its resourceVersion.
	Items []history.Item
	// Unavailable: the error said the service could not be reached or
	// answer (not a refusal on the merits such as a conflict).
	Unavailable bool
	Err         string
}

// classify maps a write's error to its outcome, and whether the error
// means the service was unavailable.
func classify(err error) (outcome Outcome, unavailable bool) {
	if err == nil {
		return Acknowledged, false
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		switch code := status.Status().Code; {
		case code == 429:
			return Failed, true // refused before it ran
		case code == 507:
			// Refused for space: by apiloom's disk guard before etcd,
			// or by etcd's quota, which refuses a write before raft or
			// at apply without applying it.
			return Failed, true
		case code >= 500:
			return Unknown, true // an etcd timeout may still commit
		default:
			return Failed, false // 409, 404, 422: refused on the merits
		}
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return Failed, true // never reached a server
	}
	return Unknown, true // EOF, reset, timeout: the request may have been served
}

// Recorder collects the writers' operations and the readers' reads.
type Recorder struct {
	mu    sync.Mutex // guards ops, reads and readFailures
	ops   []Op
	reads []Op
	// readFailures are the writers' reads that failed for unavailability
	// (call and return time): they count in the seconds unavailable.
	readFailures []Interval
}

// Interval is the span of one request, from its call to its return.
type Interval struct{ Call, Return time.Time }

func (r *Recorder) readFailed(iv Interval) {
	r.mu.Lock()
	r.readFailures = append(r.readFailures, iv)
	r.mu.Unlock()
}

// ReadFailures returns the reads that found the service unavailable.
func (r *Recorder) ReadFailures() []Interval {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Interval(nil), r.readFailures...)
}

func (r *Recorder) add(op Op) {
	r.mu.Lock()
	r.ops = append(r.ops, op)
	r.mu.Unlock()
}

func (r *Recorder) addRead(op Op) {
	r.mu.Lock()
	r.reads = append(r.reads, op)
	r.mu.Unlock()
}

// Reads returns a copy of the readers' consistent reads.
func (r *Recorder) Reads() []Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Op(nil), r.reads...)
}

// Ops returns a copy of the recorded writes.
func (r *Recorder) Ops() []Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Op(nil), r.ops...)
}
