package check

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/apiloom/apiloom/test/robustness/history"
)

// DefaultLinearizableTimeout bounds porcupine's search for one key when
// Linearizable is given no timeout.
const DefaultLinearizableTimeout = 30 * time.Second

// Linearizable checks, key by key with porcupine, that the consistent
// reads (get and list with resourceVersion "") and the writes of a history
// are linearizable against a key-value register whose writes compare and
// set on resourceVersion: a create succeeds only on a missing key (409
// otherwise), an update or delete only on an existing key (404 otherwise)
// whose revision equals the precondition if one is given (409 otherwise),
// a forced server-side apply creates or updates the key unconditionally,
// each acknowledged write's revision is above the key's previous one
// (except an update that writes the value the key holds: apiloom, like
// kube-apiserver, skips that write and answers the current revision), and
// a read returns the key's value and revision.
//
// A write with an unknown outcome may or may not have happened, at any
// time after its call (its return is infinity); if it happened its
// revision is unknown until a read reveals it. Writes that failed with
// another code (422, 400, 403, 429) changed nothing and say nothing about
// the key, and are left out, as are reads that did not succeed and reads
// with a resourceVersion other than "" (which may be stale by contract).
// A list counts as a read of every key under its prefix that the history
// mentions (absent from the list: a read of no object).
//
// timeout bounds the search per key (0: DefaultLinearizableTimeout); a key
// whose search times out is counted as skipped, not failed.
func Linearizable(h history.History, timeout time.Duration) Report {
	if timeout <= 0 {
		timeout = DefaultLinearizableTimeout
	}
	r := Report{Checker: "Linearizable"}
	perKey := partitionByKey(h)
	keys := make([]string, 0, len(perKey))
	for k := range perKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	model := kvModel.ToModel()
	for _, key := range keys {
		ops := perKey[key]
		r.Checked++
		result, info := porcupine.CheckOperationsVerbose(model, ops, timeout)
		switch result {
		case porcupine.Ok:
		case porcupine.Unknown:
			r.Skipped++
			r.Notes = append(r.Notes, fmt.Sprintf("key %q: %d operations, search timed out after %v", key, len(ops), timeout))
		case porcupine.Illegal:
			culprit, prefix := firstUnlinearizable(ops, info)
			r.failf(Failure{Ops: []int{culprit.ID}, Key: key},
				"key %q not linearizable: %v cannot follow the longest linearization found, which ends %s",
				key, culprit, describeTail(prefix))
		}
	}
	return r
}

// kvInput is what an operation asked of one key.
type kvInput struct {
	op    history.Operation // for reports; Items are not used
	kind  history.Kind      // Get for the projection of a list
	value string
	pre   int64
}

// kvOutput is what an operation learned of one key.
type kvOutput struct {
	outcome history.Outcome
	code    int
	found   bool
	value   string
	rev     int64
}

// kvState is a key's state. rev is the revision of its last change, 0
// when a write with an unknown outcome made it and no read revealed it
// yet; then floor is a revision it is known to be above.
type kvState struct {
	exists bool
	value  string
	rev    int64
	floor  int64
}

// above reports whether revision r can follow the key's last change.
func (s kvState) above(r int64) bool {
	if s.rev != 0 {
		return r > s.rev
	}
	return r > s.floor
}

var kvModel = porcupine.NondeterministicModel{
	Init: func() []any { return []any{kvState{}} },
	Step: func(state, input, output any) []any {
		return step(state.(kvState), input.(kvInput), output.(kvOutput))
	},
	Equal: func(a, b any) bool { return a.(kvState) == b.(kvState) },
}

// step returns the states the key can be in after the operation, none if
// the operation cannot happen in state s.
func step(s kvState, in kvInput, out kvOutput) []any {
	if in.kind == history.Get {
		if out.found != s.exists || (out.found && (out.value != s.value || (s.rev != 0 && out.rev != s.rev) || (s.rev == 0 && !s.above(out.rev)))) {
			return nil
		}
		if out.found && s.rev == 0 {
			s.rev, s.floor = out.rev, 0 // the read reveals an unknown write's revision
		}
		return []any{s}
	}
	preHolds := in.pre == 0 || s.rev == 0 || s.rev == in.pre
	preFails := in.pre != 0 && (s.rev == 0 || s.rev != in.pre)
	var applies bool
	var next kvState
	switch in.kind {
	case history.Create:
		applies, next = !s.exists, kvState{exists: true, value: in.value}
	case history.Update:
		applies, next = s.exists && preHolds, kvState{exists: true, value: in.value}
	case history.Delete:
		applies, next = s.exists && preHolds, kvState{}
	case history.Apply:
		applies, next = true, kvState{exists: true, value: in.value}
	}
	switch out.outcome {
	case history.Acknowledged:
		if in.kind == history.Update && applies && s.value == in.value && s.rev == out.rev {
			return []any{s} // a no-op update writes nothing and answers the object as it is
		}
		if !applies || !s.above(out.rev) {
			return nil
		}
		next.rev = out.rev
		return []any{next}
	case history.Failed:
		switch {
		case in.kind == history.Apply:
			return []any{s} // a forced apply refused (409 after its retries) changed nothing
		case out.code == 404 && !s.exists && in.kind != history.Create,
			out.code == 409 && in.kind == history.Create && s.exists,
			out.code == 409 && in.kind != history.Create && s.exists && preFails:
			return []any{s}
		}
		return nil
	default: // unknown: happened or not, at an unknown revision
		next.floor = max(s.rev, s.floor)
		if applies {
			return []any{s, next}
		}
		return []any{s}
	}
}

// partitionByKey turns a history into porcupine operations, per key.
func partitionByKey(h history.History) map[string][]porcupine.Operation {
	// The keys the history's writes and gets name. A key seen only in
	// lists was written by someone the history does not record (a
	// scenario's filler objects): with no writes to explain it, every
	// list would be unlinearizable on it. Snapshots still checks such
	// keys against etcd.
	keys := map[string]bool{}
	for _, op := range h.Operations {
		if op.Kind != history.List {
			keys[op.Key] = true
		}
	}
	perKey := map[string][]porcupine.Operation{}
	add := func(key string, op history.Operation, in kvInput, out kvOutput) {
		ret := int64(op.Return)
		if out.outcome != history.Acknowledged && out.outcome != history.Failed {
			ret = math.MaxInt64
		}
		perKey[key] = append(perKey[key], porcupine.Operation{
			ClientId: op.Client, Input: in, Output: out, Call: int64(op.Call), Return: ret, Metadata: op.ID,
		})
	}
	for _, op := range h.Operations {
		items := op.Items
		op.Items = nil // kvInput keeps op for reports only
		switch {
		case op.Kind == history.Get:
			if op.ReadRV == "" && op.Outcome == history.Acknowledged {
				add(op.Key, op, kvInput{op: op, kind: history.Get},
					kvOutput{outcome: history.Acknowledged, found: op.Found, value: op.Read, rev: op.RV})
			}
		case op.Kind == history.List:
			if op.ReadRV != "" || op.Outcome != history.Acknowledged {
				continue
			}
			listed := map[string]history.Item{}
			for _, it := range items {
				listed[it.Key] = it
			}
			for key := range keys {
				if !strings.HasPrefix(key, op.Key) {
					continue
				}
				it, found := listed[key]
				add(key, op, kvInput{op: op, kind: history.Get},
					kvOutput{outcome: history.Acknowledged, found: found, value: it.Value, rev: it.RV})
			}
		case op.Outcome == history.Failed && op.Code != 404 && op.Code != 409:
			// refused without looking at the key's state
		default:
			outcome := op.Outcome
			if outcome == history.Pending {
				outcome = history.Unknown
			}
			add(op.Key, op, kvInput{op: op, kind: op.Kind, value: op.Value, pre: op.PreconditionRV},
				kvOutput{outcome: outcome, code: op.Code, rev: op.RV})
		}
	}
	return perKey
}

// firstUnlinearizable names the operation that cannot be linearized: of
// those outside the longest partial linearization porcupine found, the one
// that returned first. It also returns that linearization.
func firstUnlinearizable(ops []porcupine.Operation, info porcupine.LinearizationInfo) (history.Operation, []porcupine.Operation) {
	var longest []porcupine.Operation
	for _, partition := range info.PartialLinearizationsOperations() {
		for _, lin := range partition {
			if len(lin) > len(longest) {
				longest = lin
			}
		}
	}
	done := map[int]bool{}
	for _, op := range longest {
		done[op.Metadata.(int)] = true
	}
	var culprit *porcupine.Operation
	for i := range ops {
		if !done[ops[i].Metadata.(int)] && (culprit == nil || ops[i].Return < culprit.Return) {
			culprit = &ops[i]
		}
	}
	if culprit == nil {
		culprit = &ops[len(ops)-1]
	}
	return culprit.Input.(kvInput).op, longest
}

func describeTail(lin []porcupine.Operation) string {
	if len(lin) == 0 {
		return "empty"
	}
	const tail = 3
	var parts []string
	for _, op := range lin[max(0, len(lin)-tail):] {
		in, out := op.Input.(kvInput), op.Output.(kvOutput)
		desc := fmt.Sprintf("op %d %s", in.op.ID, in.op.Kind)
		if out.outcome == history.Acknowledged {
			desc += fmt.Sprintf(" rv=%d", out.rev)
		}
		parts = append(parts, desc)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
