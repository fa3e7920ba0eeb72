// Package resources samples, every second, what a leak would grow: each
// apiloom replica's resident memory, open file descriptors and goroutines,
// and the etcd cluster's watchers. A scenario takes a baseline before its
// traffic, reads each replica's RSS peak for its figures, and checks that
// goroutines, fds and etcd watchers come back to the baseline (within a
// Tolerance) once the traffic stops.
package resources
