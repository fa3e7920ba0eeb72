package h2

import "net/http"

// ConnQueues is a snapshot of what one connection holds for the client,
// for tests that check that a client cannot make it grow without bound.
type ConnQueues struct {
	Open        int // open streams
	Ready       int // streams in the writer's ready queue
	ConnBlocked int // streams waiting for the connection's send window
	Control     int // bytes of control frames not yet taken by the writer
	ToClose     int // sources waiting for the writer to close them
	Stalled     int // streams waiting for window with data to send
}

// ConnQueues reports the queues of every connection s serves.
func (s *Server) ConnQueues() []ConnQueues {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	var out []ConnQueues
	for _, c := range conns {
		c.mu.Lock()
		q := ConnQueues{Open: c.open, ConnBlocked: len(c.connBlocked), Control: len(c.control), ToClose: len(c.toClose), Stalled: len(c.stalled)}
		for st := c.head; st != nil; st = st.next {
			q.Ready++
		}
		c.mu.Unlock()
		out = append(out, q)
	}
	return out
}

// DeadlinesArmed reports whether the stream of w, a ResponseWriter this
// package made, still has a timer for its read or write deadline.
func DeadlinesArmed(w http.ResponseWriter) (read, write bool) {
	rw := w.(*responseWriter)
	rw.c.mu.Lock()
	defer rw.c.mu.Unlock()
	return rw.st.readDeadline.timer != nil, rw.st.writeDeadline.timer != nil
}
