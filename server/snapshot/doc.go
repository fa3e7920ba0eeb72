// Package snapshot backs up and restores the etcd an apiloom server stores
// its objects in: Save takes a consistent snapshot of a running etcd
// (embedded or external) through etcd's Maintenance API and verifies it on
// disk, Schedule takes them on a cron schedule and keeps the newest few,
// and Restore makes a new embedded-etcd data directory from one, with the
// revision bumped and compacted so that clients relist.
//
// It is apart from server/apiserver, which only wires it to flags and to
// the server's lifetime, so that what makes a snapshot trustworthy is read
// and tested in one place.
package snapshot
