package h2_test

import (
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/apiloom/apiloom/server/internal/h2"
)

// Tests of the connection's overhead budget (calm.go): floods of frames
// that cost the server work and ask for nothing it delivers end in
// GOAWAY(ENHANCE_YOUR_CALM) and a closed connection within a bounded
// number of frames, while clients that take their responses never meet
// it. They run in synctest bubbles: the budget's drain by time is then
// exact, and no time passes while a flood runs.

// frameLog reads what the server sends on a raw client's connection, on a
// goroutine of its own, so that the client can flood without reading.
type frameLog struct {
	mu      sync.Mutex
	frames  []http2.Frame // all but DATA
	goAway  *http2.GoAwayFrame
	closed  bool // the server closed the connection
	started atomic.Bool
	done    chan struct{}
}

func (rc *rawClient) readAll() *frameLog {
	l := &frameLog{done: make(chan struct{})}
	fr := http2.NewFramer(nil, rc.nc)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	go func() {
		defer close(l.done)
		for {
			f, err := fr.ReadFrame()
			l.mu.Lock()
			if err != nil {
				l.closed = true
				l.mu.Unlock()
				return
			}
			switch f := f.(type) {
			case *http2.GoAwayFrame:
				if l.goAway == nil {
					l.goAway = &http2.GoAwayFrame{FrameHeader: f.FrameHeader, LastStreamID: f.LastStreamID, ErrCode: f.ErrCode}
				}
			case *http2.DataFrame:
			default:
				l.frames = append(l.frames, f)
			}
			l.mu.Unlock()
		}
	}()
	return l
}

// goneAway returns the server's GOAWAY, if one came.
func (l *frameLog) goneAway() *http2.GoAwayFrame {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.goAway
}

// count counts the frames that satisfy keep.
func (l *frameLog) count(keep func(http2.Frame) bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, f := range l.frames {
		if keep(f) {
			n++
		}
	}
	return n
}

// flood calls send until it fails (the server closed the connection) or
// the server's GOAWAY arrived, at most limit times, and returns how many
// calls succeeded.
func flood(t *testing.T, l *frameLog, limit int, send func(i int) error) int {
	t.Helper()
	for i := range limit {
		if l.goneAway() != nil {
			return i
		}
		if send(i) != nil {
			return i
		}
	}
	t.Fatalf("the server took all %d frames of the flood and holds %+v", limit, l.goneAway())
	return limit
}

// wantCalm checks that the flooded connection ended with
// GOAWAY(ENHANCE_YOUR_CALM) and closed. (ServeConn returns once the
// handlers have too, which rawClient's cleanup checks.)
func wantCalm(t *testing.T, l *frameLog, sent int) {
	t.Helper()
	<-l.done // the server closed the connection
	ga := l.goneAway()
	if ga == nil || ga.ErrCode != http2.ErrCodeEnhanceYourCalm {
		t.Fatalf("after %d frames: GOAWAY %v, want ENHANCE_YOUR_CALM", sent, ga)
	}
}

// TestRapidResetEndsTheConnection: a client that opens streams and resets
// them at once (CVE-2023-44487), with handlers that return as soon as
// their request is cancelled so that no stream limit is ever met, gets
// GOAWAY(ENHANCE_YOUR_CALM) and a closed connection after a bounded
// number of handler starts; a client on another connection of the same
// server is served throughout.
func TestRapidResetEndsTheConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const budget = 1200
		var started atomic.Int64
		srv := &h2.Server{OverheadBudget: budget}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/healthy" {
				_, _ = io.WriteString(w, "ok")
				return
			}
			started.Add(1)
			<-r.Context().Done()
		})
		healthy := newRawClient(t, srv, h)
		healthy.get(1, "/healthy")
		healthy.next(isEndOf(1))

		rc := newRawClient(t, srv, h)
		l := rc.readAll()
		var last uint32
		sent := flood(t, l, 100*budget, func(i int) error {
			last = uint32(2*i + 1)
			if err := rc.writeGet(last, "/attack"); err != nil {
				return err
			}
			return rc.fr.WriteRSTStream(last, http2.ErrCodeCancel)
		})
		wantCalm(t, l, sent)
		// Each wasted stream costs its HEADERS, its RST_STREAM and ten.
		if max := int64(budget/12 + 2); started.Load() > max {
			t.Errorf("%d handlers started before the GOAWAY, want at most %d", started.Load(), max)
		}
		if ga := l.goneAway(); ga.LastStreamID > last {
			t.Errorf("GOAWAY's last stream %d, beyond the last opened %d", ga.LastStreamID, last)
		}

		for id := uint32(3); id < 9; id += 2 {
			healthy.get(id, "/healthy")
			healthy.next(isEndOf(id))
		}
	})
}

// TestRapidResetWithStuckHandlers: when the reset streams' handlers do not
// return, new streams are refused instead of started; a flood of them is
// wasted work too, and ends the same way.
func TestRapidResetWithStuckHandlers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		var started atomic.Int64
		rc := newRawClient(t, &h2.Server{MaxConcurrentStreams: 10, OverheadBudget: 1200}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			started.Add(1)
			<-release // ignores its context, as a slow handler may
		}))
		l := rc.readAll()
		sent := flood(t, l, 100000, func(i int) error {
			id := uint32(2*i + 1)
			if err := rc.writeGet(id, "/"); err != nil {
				return err
			}
			return rc.fr.WriteRSTStream(id, http2.ErrCodeCancel)
		})
		wantCalm(t, l, sent)
		if started.Load() != 10 {
			t.Errorf("%d handlers started, want the stream limit, 10", started.Load())
		}
	})
}

// TestMadeYouResetEndsTheConnection: a client that makes the server reset
// its streams, here with a WINDOW_UPDATE of zero on each (CVE-2025-8671),
// wastes a handler start per stream as surely as one that resets them.
func TestMadeYouResetEndsTheConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var started atomic.Int64
		rc := newRawClient(t, &h2.Server{OverheadBudget: 1200}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			started.Add(1)
			<-r.Context().Done()
		}))
		rc.fr.AllowIllegalWrites = true // a zero increment
		l := rc.readAll()
		sent := flood(t, l, 100000, func(i int) error {
			id := uint32(2*i + 1)
			if err := rc.writeHeaders(id, false, ":method", "POST", ":scheme", "https", ":authority", "x", ":path", "/"); err != nil {
				return err
			}
			return rc.fr.WriteWindowUpdate(id, 0)
		})
		wantCalm(t, l, sent)
		if started.Load() > 1200/12+2 {
			t.Errorf("%d handlers started before the GOAWAY", started.Load())
		}
	})
}

// TestFloodsEndTheConnection: a client that reads what it is sent but
// floods frames that ask for nothing (CVE-2019-9512 PING, -9513
// PRIORITY, -9514 RST_STREAM and malformed requests, -9515 SETTINGS,
// -9516 empty header names, -9518 empty DATA, WINDOW_UPDATE, unknown
// frames) gets GOAWAY(ENHANCE_YOUR_CALM) once it sent about the budget.
func TestFloodsEndTheConnection(t *testing.T) {
	const budget = 1000
	for _, tc := range []struct {
		name  string
		setup func(rc *rawClient)
		send  func(rc *rawClient, i int) error
	}{
		{"PING", nil, func(rc *rawClient, i int) error { return rc.fr.WritePing(false, [8]byte{byte(i)}) }},
		{"SETTINGS", nil, func(rc *rawClient, i int) error {
			return rc.fr.WriteSettings(http2.Setting{ID: http2.SettingMaxFrameSize, Val: 16384 + uint32(i%2)})
		}},
		{"PRIORITY", nil, func(rc *rawClient, i int) error {
			return rc.fr.WritePriority(uint32(2*i+1), http2.PriorityParam{StreamDep: uint32(2*i + 3), Weight: 1})
		}},
		{"RST_STREAM on a closed stream", func(rc *rawClient) { rc.get(1, "/answer"); rc.next(isEndOf(1)) }, func(rc *rawClient, i int) error {
			return rc.fr.WriteRSTStream(1, http2.ErrCodeCancel)
		}},
		{"WINDOW_UPDATE", nil, func(rc *rawClient, i int) error { return rc.fr.WriteWindowUpdate(0, 1) }},
		{"empty DATA", func(rc *rawClient) {
			rc.headers(1, false, ":method", "POST", ":scheme", "https", ":authority", "x", ":path", "/")
		}, func(rc *rawClient, i int) error { return rc.fr.WriteData(1, false, nil) }},
		{"unknown frame type", nil, func(rc *rawClient, i int) error { return rc.fr.WriteRawFrame(0x42, 0, 0, []byte("x")) }},
		{"malformed requests", nil, func(rc *rawClient, i int) error {
			return rc.writeHeaders(uint32(2*i+1), true, ":method", "GET", ":scheme", "https", ":path", "/", "connection", "close")
		}},
		{"empty header names", nil, func(rc *rawClient, i int) error {
			return rc.writeHeaders(uint32(2*i+1), true, ":method", "GET", ":scheme", "https", ":path", "/", "", "v")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rc := newRawClient(t, &h2.Server{OverheadBudget: budget}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/answer" {
						return
					}
					<-r.Context().Done() // answers nothing, so that DATA frames stay on an open stream
				}))
				if tc.setup != nil {
					tc.setup(rc)
				}
				l := rc.readAll()
				sent := flood(t, l, 100*budget, func(i int) error { return tc.send(rc, i) })
				wantCalm(t, l, sent)
				if sent > budget+2 {
					t.Errorf("the server took %d frames, want at most its budget, %d", sent, budget)
				}
			})
		})
	}
}

// budgetHandler answers /answer at once and holds every other request
// until it is cancelled.
var budgetHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/answer" {
		_, _ = io.WriteString(w, "ok")
		return
	}
	<-r.Context().Done()
})

// TestWastedStreamsAgainstAnswers: a client may waste a stream for each
// response it takes, at any rate, and never meet the budget; one that
// wastes two per response does.
func TestWastedStreamsAgainstAnswers(t *testing.T) {
	for _, tc := range []struct {
		wastedPerAnswer int
		wantCalm        bool
	}{{0, false}, {1, false}, {2, true}} {
		t.Run(strconv.Itoa(tc.wastedPerAnswer), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rc := newRawClient(t, &h2.Server{OverheadBudget: 100}, budgetHandler)
				// answered sends a request and waits for its answer; false
				// once the server sent GOAWAY or closed.
				answered := func(id uint32) bool {
					if rc.writeGet(id, "/answer") != nil {
						return false
					}
					for {
						f, err := rc.fr.ReadFrame()
						if err != nil || isGoAway(f) {
							return false
						}
						if isEndOf(id)(f) {
							return true
						}
					}
				}
				id, ended := uint32(1), false
				for range 2000 {
					if !answered(id) {
						ended = true
						break
					}
					id += 2
					for range tc.wastedPerAnswer {
						if rc.writeGet(id, "/wait") != nil || rc.fr.WriteRSTStream(id, http2.ErrCodeCancel) != nil {
							ended = true
							break
						}
						id += 2
					}
				}
				if ended != tc.wantCalm {
					t.Fatalf("after %d streams, the connection ended: %v; want %v", id/2, ended, tc.wantCalm)
				}
			})
		})
	}
}

// TestBudgetDrainsWithTime: the account drains by a tenth of the budget a
// second, so a client that sends frames for nothing more slowly than that
// never meets it, however long it goes on, and one that sends them faster
// does.
func TestBudgetDrainsWithTime(t *testing.T) {
	for _, tc := range []struct {
		perSecond int
		wantCalm  bool
	}{{5, false}, {20, true}} {
		t.Run(strconv.Itoa(tc.perSecond), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const budget = 100 // drains 10 a second
				rc := newRawClient(t, &h2.Server{OverheadBudget: budget}, budgetHandler)
				l := rc.readAll()
				for i := range 300 * tc.perSecond { // 300 s: the budget, thrice over, at 20 a second
					if l.goneAway() != nil {
						break
					}
					if err := rc.fr.WritePing(false, [8]byte{byte(i)}); err != nil {
						break
					}
					time.Sleep(time.Second / time.Duration(tc.perSecond))
				}
				ga := l.goneAway()
				switch {
				case tc.wantCalm && (ga == nil || ga.ErrCode != http2.ErrCodeEnhanceYourCalm):
					t.Fatalf("GOAWAY %v, want ENHANCE_YOUR_CALM", ga)
				case !tc.wantCalm && ga != nil:
					t.Fatalf("GOAWAY %v for %d PINGs a second", ga.ErrCode, tc.perSecond)
				}
			})
		})
	}
}

// TestWindowChangesAreChargedPerStream: a SETTINGS frame that changes the
// initial window makes the server adjust every open stream, so a flood
// of them costs in proportion to the streams open, not one a frame.
func TestWindowChangesAreChargedPerStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const budget, streams = 1000, 640
		rc := newRawClient(t, &h2.Server{OverheadBudget: budget, MaxConcurrentStreams: streams}, budgetHandler)
		for i := range streams {
			rc.get(uint32(2*i+1), "/wait")
		}
		l := rc.readAll()
		sent := flood(t, l, 100*budget, func(i int) error {
			return rc.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 65535 + uint32(i%2)})
		})
		wantCalm(t, l, sent)
		if sent > budget/(1+streams/64)+1 {
			t.Errorf("the server took %d window changes over %d streams", sent, streams)
		}
	})
}

// TestRepeatedWindowSettingAppliesTheLast: a SETTINGS frame that sets the
// initial window many times leaves each stream's window as the last value
// says, though the server adjusts the streams once.
func TestRepeatedWindowSettingAppliesTheLast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		rc := newRawClient(t, &h2.Server{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-release
			_, _ = w.Write(make([]byte, 100))
		}))
		rc.get(1, "/")
		var settings []http2.Setting
		for i := range 1000 {
			settings = append(settings, http2.Setting{ID: http2.SettingInitialWindowSize, Val: uint32(1000 + i%7*1000)})
		}
		settings = append(settings, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 10})
		if err := rc.fr.WriteSettings(settings...); err != nil {
			t.Fatal(err)
		}
		rc.sync()
		close(release)
		d := rc.next(func(f http2.Frame) bool { return f.Header().Type == http2.FrameData }).(*http2.DataFrame)
		if len(d.Data()) != 10 {
			t.Fatalf("first DATA of %d bytes, want the last window, 10", len(d.Data()))
		}
	})
}
