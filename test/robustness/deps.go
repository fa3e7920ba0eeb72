package robustness

// The checkers' linearizability model checker, pinned here until the
// checkers import it.
import _ "github.com/anishathalye/porcupine"
