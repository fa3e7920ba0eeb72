// Package opsbench measures what the day-2 operations features cost a
// write: Secrets created through client-go against real in-process
// servers with encryption at rest and audit off, then with each
// configuration that turns one of them on, reported as ratios to "off"
// measured in the same run (docs/benchmarks.md).
package opsbench
