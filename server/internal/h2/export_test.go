package h2

// ConnQueues is a snapshot of what one connection holds for the client,
// for tests that check that a client cannot make it grow without bound.
type ConnQueues struct {
	Open        int // open streams
	Ready       int // streams in the writer's ready queue
	ConnBlocked int // streams waiting for the connection's send window
	Control     int // bytes of control frames not yet taken by the writer
	ToClose     int // sources waiting for the writer to close them
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
		q := ConnQueues{Open: c.open, ConnBlocked: len(c.connBlocked), Control: len(c.control), ToClose: len(c.toClose)}
		for st := c.head; st != nil; st = st.next {
			q.Ready++
		}
		c.mu.Unlock()
		out = append(out, q)
	}
	return out
}
