package h2

import (
	"golang.org/x/net/http2"

	"github.com/apiloom/apiloom/server/detach"
)

// What the reader does with each frame the client sends: process and the
// per-type handlers, and the receive-side flow control they keep.

// process handles one frame read from the client.
func (c *conn) process(f http2.Frame) error {
	switch f := f.(type) {
	case *http2.SettingsFrame:
		return c.processSettings(f)
	case *http2.MetaHeadersFrame:
		return c.processHeaders(f)
	case *http2.DataFrame:
		return c.processData(f)
	case *http2.WindowUpdateFrame:
		return c.processWindowUpdate(f)
	case *http2.PingFrame:
		if !f.IsAck() {
			c.mu.Lock()
			c.control = appendPingAck(c.control, f.Data)
			c.work.Signal()
			c.mu.Unlock()
		}
	case *http2.RSTStreamFrame:
		return c.processRSTStream(f)
	case *http2.PriorityFrame:
		if f.StreamDep == f.StreamID {
			return http2.StreamError{StreamID: f.StreamID, Code: http2.ErrCodeProtocol}
		}
	case *http2.GoAwayFrame:
		// The client is leaving: answer with our own GOAWAY, so that it
		// knows which streams were taken, and close once they are done.
		// Merely marking the connection as going away would ignore later
		// HEADERS without a word and keep an idle connection open for
		// good, since goAway (idle timeout, Shutdown) then does nothing.
		c.goAway()
	case *http2.PushPromiseFrame:
		return http2.ConnectionError(http2.ErrCodeProtocol) // clients never push
	}
	// Unknown frame types are ignored, as the protocol requires.
	return nil
}

// processRSTStream ends the stream the client reset. Its source is closed
// here, not left to the writer, which may be stuck for WriteTimeout on a
// client that does not read: a reset watch lets go of its registration at
// once, however many the client opens and resets meanwhile.
func (c *conn) processRSTStream(f *http2.RSTStreamFrame) error {
	c.mu.Lock()
	if f.StreamID > c.maxClientID {
		c.mu.Unlock()
		return http2.ConnectionError(http2.ErrCodeProtocol) // RST_STREAM on an idle stream
	}
	var src detach.Source
	if st := c.streams[f.StreamID]; st != nil {
		if !st.answered {
			c.chargeLocked(costWasted) // an early reset: the handler was started for nothing
		}
		src = c.closeStreamLocked(st, noReset)
	}
	c.mu.Unlock()
	if src != nil {
		src.Close()
	}
	return nil
}

// processSettings applies the client's settings in order. A change of
// SETTINGS_INITIAL_WINDOW_SIZE adjusts every open stream's window, so a
// frame that repeats it would cost the server a pass over the streams per
// repetition for 6 bytes: the window is applied once per frame, with its
// last value, which leaves every window as applying each in turn would
// (the adjustments add up to the last value's). The pass is charged to the
// client's budget.
func (c *conn) processSettings(f *http2.SettingsFrame) error {
	if f.IsAck() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	newWindow := int64(-1)
	err := f.ForeachSetting(func(s http2.Setting) error {
		if err := s.Valid(); err != nil {
			return err
		}
		switch s.ID {
		case http2.SettingInitialWindowSize:
			newWindow = int64(s.Val)
		case http2.SettingMaxFrameSize:
			c.peerFrame = int(s.Val)
		case http2.SettingHeaderTableSize:
			c.tableSize, c.tableChange = s.Val, true
		}
		return nil
	})
	if err != nil {
		return err
	}
	if newWindow >= 0 && newWindow != c.peerWindow {
		delta := newWindow - c.peerWindow
		c.peerWindow = newWindow
		c.chargeLocked(int64(len(c.streams) / 64))
		for _, st := range c.streams {
			st.sendWindow += delta
			if st.sendWindow > maxWindow {
				return http2.ConnectionError(http2.ErrCodeFlowControl)
			}
			if delta > 0 && st.flowBlocked {
				st.flowBlocked = false
				c.readyLocked(st)
			}
		}
	}
	c.control = appendSettingsAck(c.control)
	c.work.Signal()
	return nil
}

func (c *conn) processWindowUpdate(f *http2.WindowUpdateFrame) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	incr := int64(f.Increment)
	if f.StreamID == 0 {
		c.sendWindow += incr
		if c.sendWindow > maxWindow {
			return http2.ConnectionError(http2.ErrCodeFlowControl)
		}
		for _, st := range c.connBlocked {
			st.connBlocked = false
			if st.flowBlocked {
				st.flowBlocked = false
				c.readyLocked(st)
			}
		}
		clear(c.connBlocked)
		c.connBlocked = c.connBlocked[:0]
		return nil
	}
	if f.StreamID > c.maxClientID {
		return http2.ConnectionError(http2.ErrCodeProtocol) // WINDOW_UPDATE on an idle stream
	}
	st := c.streams[f.StreamID]
	if st == nil {
		return nil // closed; updates may still be in flight
	}
	st.sendWindow += incr
	if st.sendWindow > maxWindow {
		return http2.StreamError{StreamID: f.StreamID, Code: http2.ErrCodeFlowControl}
	}
	if st.flowBlocked {
		c.grantedLocked(st)
	}
	return nil
}

// processData delivers a request body frame, enforcing flow control and
// the declared Content-Length.
func (c *conn) processData(f *http2.DataFrame) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := int64(f.Length) // padding counts against the window too
	if n > c.recvWindow {
		return http2.ConnectionError(http2.ErrCodeFlowControl)
	}
	c.recvWindow -= n
	st := c.streams[f.StreamID]
	if st == nil || st.remoteClosed {
		c.creditLocked(n, true) // nobody will read it
		if f.StreamID > c.maxClientID {
			return http2.ConnectionError(http2.ErrCodeProtocol) // DATA on an idle stream
		}
		return http2.StreamError{StreamID: f.StreamID, Code: http2.ErrCodeStreamClosed}
	}
	if n > st.recvWindow {
		c.creditLocked(n, true)
		return http2.StreamError{StreamID: f.StreamID, Code: http2.ErrCodeFlowControl}
	}
	st.recvWindow -= n
	data := f.Data()
	if pad := n - int64(len(data)); pad > 0 {
		// Nobody reads padding: it is returned as if read, to the
		// stream's window as well as the connection's, or a client that
		// pads runs out of stream window and its upload stalls.
		c.returnLocked(st, pad, false)
	}
	c.carriedLocked(len(data))
	ok, dropped := st.body.deliver(data, f.StreamEnded())
	if !ok {
		c.creditLocked(int64(len(data)), true)                                      // not delivered: nobody reads it
		return http2.StreamError{StreamID: f.StreamID, Code: http2.ErrCodeProtocol} // more or less than Content-Length
	}
	if dropped {
		st.recvWindow += int64(len(data))
		c.creditLocked(int64(len(data)), true)
	}
	if f.StreamEnded() {
		st.remoteClosed = true
	}
	return nil
}

// creditLocked returns n received bytes to the connection's receive
// window, batching the WINDOW_UPDATE unless now.
func (c *conn) creditLocked(n int64, now bool) {
	c.recvCredit += n
	if c.recvCredit >= connWindow/4 || (now && c.recvCredit > 0) {
		c.control = appendWindowUpdate(c.control, 0, uint32(c.recvCredit))
		c.recvWindow += c.recvCredit
		c.recvCredit = 0
		c.work.Signal()
	}
}

// bodyRead returns n bytes a handler read to the stream's and the
// connection's windows; drained says the handler has read all that came.
func (c *conn) bodyRead(st *stream, n int64, drained bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.returnLocked(st, n, drained)
}

// returnLocked returns n bytes of st's body to the stream's and the
// connection's windows, batching the WINDOW_UPDATEs unless now.
func (c *conn) returnLocked(st *stream, n int64, now bool) {
	st.recvCredit += n
	if !st.closed && !st.remoteClosed && (now || st.recvCredit >= initialStreamWindow/4) {
		c.control = appendWindowUpdate(c.control, st.id, uint32(st.recvCredit))
		st.recvWindow += st.recvCredit
		st.recvCredit = 0
		c.work.Signal()
	}
	c.creditLocked(n, now)
}
