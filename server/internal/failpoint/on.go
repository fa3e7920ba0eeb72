//go:build apiloom_failpoints

package failpoint

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

// Enabled is true in a build with the apiloom_failpoints tag.
const Enabled = true

// point is one armed failpoint.
type point struct {
	at    int64        // the evaluation that fires, from 1; immutable
	count atomic.Int64 // evaluations so far
}

// armed is parsed once, at start, from $APILOOM_FAILPOINTS; read-only
// afterwards, so Fire needs no lock.
var armed = mustParse(os.Getenv(EnvVar))

func mustParse(spec string) map[Name]*point {
	points, err := parse(spec)
	if err != nil {
		// A test build told to plant a bug it does not know must not run
		// as if the bug were planted.
		panic(fmt.Sprintf("failpoint: %s=%q: %v", EnvVar, spec, err))
	}
	for _, n := range Names {
		if p := points[n]; p != nil {
			fmt.Fprintf(os.Stderr, "failpoint %s armed: fires at evaluation %d\n", n, p.at)
		}
	}
	return points
}

// parse reads "name=N;name=N" (spaces and empty terms allowed).
func parse(spec string) (map[Name]*point, error) {
	points := map[Name]*point{}
	for term := range strings.SplitSeq(spec, ";") {
		term = strings.TrimSpace(term)
		if term == "" {
			continue
		}
		name, n, ok := strings.Cut(term, "=")
		if !ok {
			return nil, fmt.Errorf("term %q: want name=N", term)
		}
		known := false
		for _, k := range Names {
			known = known || Name(name) == k
		}
		if !known {
			return nil, fmt.Errorf("term %q: unknown failpoint %q (known: %v)", term, name, Names)
		}
		at, err := strconv.ParseInt(n, 10, 64)
		if err != nil || at < 1 {
			return nil, fmt.Errorf("term %q: N must be a positive integer", term)
		}
		if points[Name(name)] != nil {
			return nil, fmt.Errorf("term %q: %s armed twice", term, name)
		}
		points[Name(name)] = &point{at: at}
	}
	return points, nil
}

// Fire counts one evaluation of name and reports whether it is the one
// that fires. Safe for concurrent use: exactly one caller sees true.
func Fire(name Name) bool {
	p := armed[name]
	return p != nil && p.count.Add(1) == p.at
}

// Logf writes "failpoint NAME fired: ..." to standard error, which the
// robustness suite keeps as the replica's log.
func Logf(name Name, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "failpoint %s fired: %s\n", name, fmt.Sprintf(format, args...))
}
