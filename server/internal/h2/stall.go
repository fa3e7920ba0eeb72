package h2

import (
	"fmt"
	"os"
	"slices"
	"time"

	"golang.org/x/net/http2"

	"github.com/apiloom/apiloom/server/detach"
)

// Streams the client starves of flow-control window (Server's
// StreamWriteTimeout). A client that stops reading a watch keeps granting
// no window, and the watch would hold its registration, its Source and
// its place in the connection until the watch's own timeout, 30 to 60
// minutes later; a handler writing a response would wait as long. A
// stream that has something to send and can send none of it for
// StreamWriteTimeout is reset instead. Any progress, however slow, starts
// the wait again, so a client that reads slowly keeps its stream.
//
// The connection keeps its stalled streams in a list in the order they
// stalled, with one timer for the oldest, rather than a timer per stream:
// at a connection-level stall every stream with data waits at once.

// errStalled is what a handler's writes return once its stream was reset
// for a client that granted it no window for StreamWriteTimeout.
var errStalled = fmt.Errorf("http2: the client accepted none of the stream's data in time: %w", os.ErrDeadlineExceeded)

// stallLocked notes that st has data to send and no window for it (its
// own or the connection's), unless it already waits.
func (c *conn) stallLocked(st *stream) {
	timeout := c.srv.StreamWriteTimeout
	if timeout <= 0 || !st.stalledSince.IsZero() {
		return
	}
	st.stalledSince = time.Now()
	c.stalled = append(c.stalled, st)
	if len(c.stalled) > 1 {
		return // the timer is set for an older stall
	}
	if c.stallTimer == nil {
		c.stallTimer = time.AfterFunc(timeout, c.endStalled)
	} else {
		c.stallTimer.Reset(timeout)
	}
}

// progressLocked notes that st sent data, or found it had none to send:
// it no longer waits for window.
func (c *conn) progressLocked(st *stream) {
	if st.stalledSince.IsZero() {
		return
	}
	st.stalledSince = time.Time{}
	// The list holds open streams only, so this scan is bounded by the
	// stream limit.
	if i := slices.Index(c.stalled, st); i >= 0 {
		c.stalled = slices.Delete(c.stalled, i, i+1)
	}
}

// endStalled runs when the stall timer fires: it resets every stream
// that has waited StreamWriteTimeout, closes their Sources, and sets the
// timer for the next oldest.
func (c *conn) endStalled() {
	timeout := c.srv.StreamWriteTimeout
	var sources []detach.Source
	c.mu.Lock()
	now := time.Now()
	for !c.closing && len(c.stalled) > 0 && now.Sub(c.stalled[0].stalledSince) >= timeout {
		st := c.stalled[0]
		c.log.Debug("http2: resetting a stream the client grants no window", "stream", st.id, "waited", now.Sub(st.stalledSince))
		c.progressLocked(st) // out of the list
		st.closeErr = errStalled
		if src := c.closeStreamLocked(st, http2.ErrCodeCancel); src != nil {
			sources = append(sources, src)
		}
	}
	if !c.closing && len(c.stalled) > 0 {
		c.stallTimer.Reset(c.stalled[0].stalledSince.Add(timeout).Sub(now))
	}
	c.mu.Unlock()
	for _, src := range sources {
		src.Close()
	}
}
