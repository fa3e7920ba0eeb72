// Package check holds the robustness suite's checkers: functions over what
// clients did (a history.History) and what etcd holds (an Etcd: its
// history of changes, compaction revision and final state), each returning
// a Report that names the operations or watch streams that broke a
// guarantee.
//
//   - LostWrites: every acknowledged write is in etcd at the revision it
//     was acknowledged with; no definitely failed write is.
//   - WatchStreams: every watch stream is etcd's history filtered by its
//     selector from its start revision: ordered, unique, gap-free, its
//     bookmarks honest, resumable; 410 only below the compaction.
//   - Linearizable: consistent reads and writes are linearizable per key
//     (porcupine, a key-value model with compare-and-set on
//     resourceVersion; an operation with an unknown outcome may or may
//     not have happened).
//   - Snapshots: every read, stale or not, answered a state etcd had: a
//     get the put at its revision, a list etcd's whole state under its
//     prefix at its revision.
//   - Converged: every informer's final store equals etcd's final state
//     for its selector.
//   - ReadYourWrites: a consistent read called after a write was
//     acknowledged, by the same replica or another, sees that write: its
//     revision is at least the write's.
//
// The checkers take etcd's history as plain data (Change), so that they
// do not need etcd; the scenario reads it from etcd (a watch from revision
// 1 with previous values, before any compaction) and maps etcd keys and
// values to the history's keys and values.
package check
