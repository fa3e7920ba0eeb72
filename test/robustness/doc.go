// Package robustness proves apiloom's guarantees by fault injection, the
// way etcd's robustness tests prove etcd's: a 3-member etcd cluster, two
// apiloom replicas, traffic whose every write is recorded, faults injected
// while it runs, and checkers that compare what clients saw with what etcd
// holds (make robustness). It is a module of its own, so that its
// dependencies (porcupine) stay out of apiloom's.
package robustness
