//go:build race

package e2e

// followStreams is 200 under the race detector, which allows 8,128
// goroutines in all: each stream takes a few (the server's handler, the
// client's reader, its HTTP/2 plumbing) beside the rest of the suite's.
// Without -race it is the 1,000 (subresources_norace_test.go).
const followStreams = 200
