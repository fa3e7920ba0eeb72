// Package sim generates histories for the checkers' tests: clients run
// random operations against a fake linearizable store (one revision
// counter, compare-and-set on revision, like etcd behind apiloom), with
// overlapping calls and lost answers, and watch streams and informers are
// fed from the store's log. A Config can plant one bug, which the
// matching checker must catch: a dropped watch event, a write
// acknowledged but never committed, a stale consistent read, an informer
// that misses a delete, a list that lacks an object.
//
// Runs are deterministic for a seed: one goroutine interleaves the
// clients' steps on a logical clock.
package sim
