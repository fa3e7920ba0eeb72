package h2

import (
	"time"

	"golang.org/x/net/http2"
)

// The work a client makes the connection do for nothing, and the budget
// that bounds it (Server.OverheadBudget). Every published HTTP/2 denial of
// service sends frames that are cheap to send and cost the server work
// without asking for anything it then delivers: streams opened and reset
// at once (rapid reset, CVE-2023-44487), or made to be reset by the server
// (MadeYouReset, CVE-2025-8671); PING, SETTINGS, PRIORITY, RST_STREAM and
// WINDOW_UPDATE floods and empty DATA frames (CVE-2019-9512 to -9518);
// header blocks that decode to far more than they weigh (HPACK bomb,
// CVE-2016-6581). Each has a limit of its own somewhere, but limits per
// frame type leave the sum unbounded, so the connection keeps one account:
//
//   - every frame the client sends costs costFrame;
//   - a stream that ends before its response began, because the client
//     reset it, made the server reset or refuse it, or sent a request too
//     malformed to serve, costs costWasted more: a handler was started, or
//     a request decoded, for nothing;
//   - a decoded header list costs a unit per headerUnit bytes: it is what
//     a header block makes the server allocate and scan, which HPACK lets
//     a few bytes name;
//   - useful work pays back: each response begun refundAnswered, as much
//     as a stream wasted costs with its HEADERS and RST_STREAM, and each
//     KiB of DATA carried either way one unit;
//   - the account never goes below zero, so past good behaviour buys no
//     future abuse, and it drains by a tenth of the budget a second, so a
//     client that idles and PINGs forever never reaches it.
//
// A connection whose account passes the budget ends with
// GOAWAY(ENHANCE_YOUR_CALM), as x/net/http2 ends one with too many early
// resets or control frames queued. A client that gets its responses
// earns more than its requests cost, so no pattern of requests, however
// fast, reaches the budget; one that wastes at most one stream per
// response it takes never does either. What the budget bounds is the work
// done for nothing beyond that: about OverheadBudget/12 wasted handler
// starts per connection, and a tenth of that per second after.
const (
	costFrame      = 1
	costWasted     = 10
	refundAnswered = costWasted + 3*costFrame // its own HEADERS, and a wasted stream's HEADERS and RST_STREAM
	headerUnit     = 4 << 10
	// budgetDrain is how long a full budget takes to drain.
	budgetDrain = 10 * time.Second
	// defaultOverheadBudget is enough for a client to open its streams
	// (1000 by default) all at once before any is answered, and to cancel
	// hundreds of requests in a burst.
	defaultOverheadBudget = 10000
)

// budget is a connection's account of wasted work. Its fields are guarded
// by the connection's mu.
type budget struct {
	limit int64 // <= 0: no limit
	owed  int64
	// perUnit is how long one unit takes to drain, and drained how far
	// the drain has got: owed is as of then.
	perUnit time.Duration
	drained time.Time
	// dataBytes is DATA carried but not yet refunded (less than a KiB).
	dataBytes int64
}

func newBudget(limit int) budget {
	b := budget{limit: int64(limit), drained: time.Now()}
	if limit > 0 {
		b.perUnit = max(1, budgetDrain/time.Duration(limit))
	}
	return b
}

// chargeLocked adds units to what the client owes.
func (c *conn) chargeLocked(units int64) {
	c.budget.owed += units
}

// refundLocked pays units back, never below zero.
func (c *conn) refundLocked(units int64) {
	c.budget.owed = max(0, c.budget.owed-units)
}

// carriedLocked notes n bytes of DATA carried, sent or received: a unit
// back for each KiB.
func (c *conn) carriedLocked(n int) {
	b := &c.budget
	b.dataBytes += int64(n)
	if b.dataBytes >= 1<<10 {
		c.refundLocked(b.dataBytes >> 10)
		b.dataBytes &= 1<<10 - 1
	}
}

// overBudgetLocked drains the account by the time passed since the last
// call and reports whether what is owed passes the limit. The reader calls
// it after each frame, once the frame and what it caused were charged, so
// the drain is applied in step with the charges: a client that idled does
// not bank the idle time for a burst.
func (c *conn) overBudgetLocked(now time.Time) bool {
	b := &c.budget
	if b.limit <= 0 {
		return false
	}
	if elapsed := now.Sub(b.drained); elapsed >= b.perUnit {
		units := int64(min(elapsed, budgetDrain) / b.perUnit)
		if units >= b.owed {
			b.owed, b.drained = 0, now // nothing owed: the drain does not bank
		} else {
			b.owed -= units
			b.drained = b.drained.Add(time.Duration(units) * b.perUnit)
		}
	}
	return b.owed > b.limit
}

// frameCost is what reading f costs the client, beyond what its handling
// charges: one frame, plus its header list's weight for a request.
func frameCost(f http2.Frame) int64 {
	mh, ok := f.(*http2.MetaHeadersFrame)
	if !ok {
		return costFrame
	}
	var size uint32
	for _, hf := range mh.Fields {
		size += hf.Size()
	}
	return costFrame + int64(size/headerUnit)
}
