//go:build race

package e2e

// regionGuardRounds is 400 under the race detector, which makes a round
// about four times as slow: 1,000 rounds took 47s on a 2-core machine,
// 400 keep the test under 30s even on a loaded one. Without -race it runs
// all 1,000 (hooks_consistent_norace_test.go). With the guard's old
// cached read, 1,000 rounds under -race saw the stale 403 68 times, so
// 400 still catch it.
const regionGuardRounds = 400
