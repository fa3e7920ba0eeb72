//go:build race

package e2e

// regionGuardRounds is 300 under the race detector, which makes a round
// about four times as slow: on a 2-core machine 1,000 rounds took 47s,
// and 400 took 26-33s while other builds ran; 300 keep the test within
// about 25s. Without -race it runs all 1,000
// (hooks_consistent_norace_test.go). With the guard's old cached read,
// 1,000 rounds under -race saw the stale 403 68 times, 400 saw it 30
// times and 300 18 and 19 times, so 300 still catch it.
const regionGuardRounds = 300
