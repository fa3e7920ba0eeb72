// Package robustness proves apiloom's guarantees by fault injection, the
// way etcd's robustness tests prove etcd's: a 3-member etcd cluster, two
// apiloom replicas, traffic whose every write is recorded, faults injected
// while it runs, and checkers that compare what clients saw with what etcd
// holds (make robustness). It is a module of its own, so that its
// dependencies (porcupine) stay out of apiloom's.
//
//   - cmd/etcd: one etcd member (go.etcd.io/etcd/server/v3/embed at the
//     version of apiloom's go.mod), a process of its own.
//   - cluster: the processes — a 3-member etcd cluster on loopback ports
//     18400-18405 and two apiloom replicas on 18420-18421 — killable with
//     SIGKILL, pausable with SIGSTOP, restartable on their data; leader
//     discovery through etcd's Status.
//   - traffic: writers (creates, preconditioned updates and deletes,
//     forced server-side applies, each tagged with an operation id,
//     outcome acknowledged/failed/unknown), consistent readers (get and
//     list on each replica), list/watch/resume/relist watchers, generated
//     informers on each replica; etcd's history read straight from etcd,
//     and ForCheckers, which hands all of it to package check.
//   - check, history: the checkers every scenario runs (check.All) and
//     the records they read.
//   - scenario_test.go: the scenarios, which run only with
//     APILOOM_ROBUSTNESS=1 (make robustness) and print their FIGURES line.
package robustness
