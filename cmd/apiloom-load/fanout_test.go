package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestFanoutRoundsFromFlags: lists of watcher counts and transports give
// one round each, transports next to each other at a count; unknown
// transports and counts out of range are refused.
func TestFanoutRoundsFromFlags(t *testing.T) {
	parse := func(args ...string) (config, error) {
		c := defaultConfig()
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		c.addFlags(fs)
		if err := fs.Parse(append([]string{"--kubeconfig", "k"}, args...)); err != nil {
			return c, err
		}
		return c, c.validate()
	}
	c, err := parse()
	if err != nil {
		t.Fatal(err)
	}
	if got := c.fanoutRounds(); !slices.Equal(got, []fanoutRound{{1000, transportH2}}) {
		t.Errorf("default rounds %v", got)
	}
	if c.profileOut(c.fanoutRounds()[0]) != c.ProfileOut {
		t.Error("a single round's profile is not --profile-out")
	}
	c, err = parse("--fanout-watchers", "100,1000", "--fanout-transports", "h2,http1", "--profile-out", "/x/fanout.cpu.pprof")
	if err != nil {
		t.Fatal(err)
	}
	want := []fanoutRound{{100, transportH2}, {100, transportHTTP1}, {1000, transportH2}, {1000, transportHTTP1}}
	if got := c.fanoutRounds(); !slices.Equal(got, want) {
		t.Errorf("rounds %v, want %v", got, want)
	}
	if got := c.profileOut(want[1]); got != "/x/fanout.cpu-100-http1.pprof" {
		t.Errorf("profile of %v: %s", want[1], got)
	}
	for _, bad := range [][]string{
		{"--fanout-transports", "h3"},
		{"--fanout-watchers", "100,0"},
		{"--fanout-watchers", "100,60000"},
	} {
		if _, err := parse(bad...); err == nil || !strings.Contains(err.Error(), "--fanout-") {
			t.Errorf("%v: %v", bad, err)
		}
	}
}

// TestReadLegacyFanout: a result file from before rounds (one "fanout"
// object, no transport) reads as one h2 round.
func TestReadLegacyFanout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.json")
	old := `{"label":"old","fanout":{"watchers":1000,"connections":2,"events":{"delivered":5}}}`
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := readResult(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Fanout) != 1 || r.Fanout[0].round() != (fanoutRound{1000, transportH2}) || r.Fanout[0].Events.Delivered != 5 || r.LegacyFanout != nil {
		t.Fatalf("read %+v", r.Fanout)
	}
}
