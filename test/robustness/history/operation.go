package history

import (
	"fmt"
	"time"
)

// Kind is what an operation did.
type Kind string

// The operations the checkers understand.
const (
	Create Kind = "create"
	Update Kind = "update"
	Delete Kind = "delete"
	// Apply is a server-side apply with force: it creates the object or
	// updates it, with no precondition.
	Apply Kind = "apply"
	Get   Kind = "get"
	List  Kind = "list"
)

// IsRead reports whether an operation of this kind only reads.
func (k Kind) IsRead() bool { return k == Get || k == List }

// IsWrite reports whether an operation of this kind changes state.
func (k Kind) IsWrite() bool { return k == Create || k == Update || k == Delete || k == Apply }

// Outcome is what a client knows about whether its operation happened.
type Outcome int

const (
	// Pending: called, not yet returned. A history handed to a checker
	// treats a still pending operation as Unknown.
	Pending Outcome = iota
	// Acknowledged: the server answered success.
	Acknowledged
	// Failed: the server answered with a Status that says nothing
	// happened (409 Conflict or AlreadyExists, 404, 422, 400, 403, 429).
	Failed
	// Unknown: timeout, 5xx, connection lost; a write may or may not have
	// happened.
	Unknown
)

func (o Outcome) String() string {
	switch o {
	case Pending:
		return "pending"
	case Acknowledged:
		return "acknowledged"
	case Failed:
		return "failed"
	case Unknown:
		return "unknown"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Item is one object as a client read it: its key, value and
// resourceVersion (the etcd revision that last modified it).
type Item struct {
	Key   string
	Value string
	RV    int64
}

// Request is what a client asked for.
type Request struct {
	Kind Kind
	// Key is the object's key (namespace/name); for List, the key prefix
	// the list covers ("" for all keys).
	Key string
	// PreconditionRV is the resourceVersion an update or delete requires
	// (metadata.resourceVersion, or DeleteOptions.Preconditions); 0 for
	// none.
	PreconditionRV int64
	// Value is the value a create or update writes.
	Value string
	// ReadRV is the resourceVersion a get or list asked for, as sent: ""
	// is a consistent (quorum) read, "0" may be served from the cache.
	ReadRV string
	// Replica is the apiloom replica the request was sent to, for the
	// checkers that compare replicas (ReadYourWrites).
	Replica int
}

// Response is what the server answered to an operation that returned.
type Response struct {
	// RV is the resourceVersion answered: a write's new revision (for a
	// delete, the deletion's revision), a get's object's modification
	// revision, a list's revision.
	RV int64
	// Found and Read: the value of the object a get read (Found is false
	// on a 404).
	Found bool
	Read  string
	// Items: the objects a list read.
	Items []Item
	// Code and Reason: the HTTP code and Status reason of an error
	// answer; 0 and "" on success or when no answer came.
	Code   int
	Reason string
	// Err is the error's text, for reports.
	Err string
}

// Operation is one request and what became of it.
type Operation struct {
	// ID identifies the operation in the whole history; the checkers'
	// reports name operations by it.
	ID int
	// Client identifies the client (one at a time: a client's operations
	// never overlap).
	Client int
	Request
	// Call and Return are monotonic times since the recorder started.
	// Return is meaningful only when the outcome is not Pending or Unknown.
	Call, Return time.Duration
	Outcome      Outcome
	Response
}

func (op Operation) String() string {
	s := fmt.Sprintf("op %d (client %d) %s %q", op.ID, op.Client, op.Kind, op.Key)
	if op.PreconditionRV != 0 {
		s += fmt.Sprintf(" if rv=%d", op.PreconditionRV)
	}
	if op.Kind == Create || op.Kind == Update || op.Kind == Apply {
		s += fmt.Sprintf(" value=%q", op.Value)
	}
	if op.Kind == Get || op.Kind == List {
		s += fmt.Sprintf(" rv=%q", op.ReadRV)
	}
	s += " -> " + op.Outcome.String()
	switch {
	case op.Outcome == Acknowledged && op.Kind == Get && op.Found:
		s += fmt.Sprintf(" value=%q rv=%d", op.Read, op.RV)
	case op.Outcome == Acknowledged && op.Kind == Get:
		s += " not found"
	case op.Outcome == Acknowledged && op.Kind == List:
		s += fmt.Sprintf(" %d items rv=%d", len(op.Items), op.RV)
	case op.Outcome == Acknowledged:
		s += fmt.Sprintf(" rv=%d", op.RV)
	case op.Code != 0:
		s += fmt.Sprintf(" %d %s", op.Code, op.Reason)
	}
	return s
}
