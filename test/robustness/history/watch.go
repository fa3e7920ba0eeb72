package history

import "fmt"

// EventType is the type of a watch event, as in metav1.WatchEvent.
type EventType string

// The watch event types.
const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
	Bookmark EventType = "BOOKMARK"
)

// Event is one event a watch stream received. For a bookmark only RV is
// set. For a deletion, Value is the object's last value and RV the
// deletion's revision.
type Event struct {
	Type  EventType
	Key   string
	Value string
	RV    int64
}

// EndReason is how a watch stream ended.
type EndReason int

const (
	// Open: the stream had not ended when the history was taken.
	Open EndReason = iota
	// Closed: the stream ended without an error event (the server or
	// the client closed it).
	Closed
	// Gone: the stream ended with a 410 (Expired, "too old resource
	// version").
	Gone
	// Error: the stream ended with another error event or a transport
	// error.
	Error
)

func (r EndReason) String() string {
	switch r {
	case Open:
		return "open"
	case Closed:
		return "closed"
	case Gone:
		return "410 gone"
	case Error:
		return "error"
	}
	return fmt.Sprintf("EndReason(%d)", int(r))
}

// Stream is one watch stream.
type Stream struct {
	ID     int
	Client int
	// Prefix selects the keys the stream watches ("ns/" for a namespace,
	// "" for all). Label and field selectors are not modelled yet.
	Prefix string
	// StartRV is the resourceVersion the watch was opened with; the
	// stream must deliver every matching change after it. Watches from
	// "" or "0" (which begin with the current state as ADDED events) are
	// not modelled: a client lists, then watches from the list's
	// revision, and records that.
	StartRV int64
	// Resumes is the ID of the stream this one resumes (opened from the
	// last revision that stream delivered, an event's or a bookmark's),
	// or 0.
	Resumes int
	Events  []Event
	End     EndReason
	// Err is the error that ended the stream, for reports.
	Err string
}

// LastRV is the last revision the stream is known to have caught up to:
// its last event's or bookmark's, or its start.
func (s *Stream) LastRV() int64 {
	if n := len(s.Events); n > 0 {
		return s.Events[n-1].RV
	}
	return s.StartRV
}

// InformerState is an informer's store at the end of a scenario, after it
// was given the chance to catch up.
type InformerState struct {
	Client int
	// Prefix selects the keys the informer lists and watches.
	Prefix string
	// Items maps each key in the store to the object held.
	Items map[string]Item
}
