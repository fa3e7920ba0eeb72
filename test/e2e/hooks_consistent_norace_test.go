//go:build !race

package e2e

// regionGuardRounds is 1,000 without the race detector (about 12s on a
// 2-core machine); hooks_consistent_race_test.go says why fewer with it.
const regionGuardRounds = 1000
