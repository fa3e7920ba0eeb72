//go:build !race

package e2e

// followStreams is how many follow streams TestManyFollowStreams holds
// at once (200 under -race: subresources_race_test.go).
const followStreams = 1000
