// Package failpoint plants known bugs in a test build of apiloom, so that
// the robustness suite (test/robustness) can show that each of its
// checkers catches the bug it is meant to catch.
//
// A site in the server reads
//
//	if failpoint.Enabled && failpoint.Fire(failpoint.WatchDropEvent) {
//		failpoint.Logf(failpoint.WatchDropEvent, "...")
//		... the bug ...
//	}
//
// In a normal build Enabled is the constant false: the compiler removes
// the whole block, and no failpoint can be armed whatever the
// environment says. Only a build with the tag apiloom_failpoints
// (go build -tags apiloom_failpoints ./cmd/apiloom) has working
// failpoints, and each stays off unless $APILOOM_FAILPOINTS arms it.
//
// This is etcd's gofail (// gofail: var name struct{} comments that
// `gofail enable` rewrites into code, armed by $GOFAIL_FAILPOINTS) done
// with a build tag: no source rewriting before a build, no extra module.
//
// $APILOOM_FAILPOINTS is a list of name=N separated by ';': the failpoint
// name fires on its Nth evaluation, once (gofail's "(N-1)*off->1*return").
// A planted bug that fires once is one operation the checkers must name.
// When a failpoint fires the site writes a line "failpoint NAME fired:
// ..." to standard error, so a test can tell which operation it spoiled.
package failpoint

// Name names a failpoint: one planted bug.
type Name string

// The planted bugs.
const (
	// WatchDropEvent: the watch cache does not send one event to the
	// watcher it is due to (the Nth event dispatched to any watcher), and
	// moves that watcher's cursor past it as if it had.
	WatchDropEvent Name = "watchDropEvent"
	// AckWithoutCommit: one create or update (the Nth) is answered with the
	// object and a plausible resourceVersion without being written to etcd.
	// The revision is one etcd really assigned, to a put of a key apiloom
	// never reads, so no real write can share it.
	AckWithoutCommit Name = "ackWithoutCommit"
	// StaleConsistentRead: one consistent get (resourceVersion "", the Nth
	// served by the store of an object that later revisions left alone) is
	// answered from the revision just before the object's last change: a
	// state etcd had, but no longer the latest. A get of an object changed
	// by the newest revision is passed over: its write may not have been
	// acknowledged yet, and a read that overlaps the write may see either
	// state, so no checker could tell the planted answer from a right one.
	StaleConsistentRead Name = "staleConsistentRead"
	// ListDropItem: one consistent list (resourceVersion "", the Nth the
	// watch cache answers from memory) leaves out one of its items: a
	// state etcd never had.
	ListDropItem Name = "listDropItem"
	// StaleConsistentList: one consistent list (resourceVersion "", the
	// Nth the watch cache answers from memory) is answered from the state
	// before the resource's last staleListBack changes, as a replica whose
	// cache lags would answer: a state etcd had, but not the latest.
	StaleConsistentList Name = "staleConsistentList"
	// InformerDropDelete: the watch cache does not send one DELETED event
	// (the Nth due to any watch-list watcher, as informers open) and, as a
	// per-watcher filter gone stale would, no later event of that key to
	// that watcher. A single dropped event heals in an informer at the
	// key's next change; this one does not, so the informer's store keeps
	// the deleted object.
	InformerDropDelete Name = "informerDropDelete"
)

// Names lists every failpoint, for the parser and the docs.
var Names = []Name{WatchDropEvent, AckWithoutCommit, StaleConsistentRead, ListDropItem, StaleConsistentList, InformerDropDelete}

// EnvVar is the environment variable that arms failpoints in a build with
// the apiloom_failpoints tag; a normal build ignores it.
const EnvVar = "APILOOM_FAILPOINTS"
