package apiserver

import (
	"errors"

	"github.com/spf13/pflag"
)

// APFOptions choose how the server shares its
// concurrency between clients (apf.go, docs/priority-and-fairness.md).
type APFOptions struct {
	// EnablePriorityAndFairness puts k8s.io/apiserver's API Priority and
	// Fairness filter where the max-in-flight limit is: requests are
	// classified by FlowSchemas into PriorityLevelConfigurations, which
	// share --max-requests-inflight + --max-mutating-requests-inflight
	// seats. Off, the two flags are the max-in-flight limit's separate
	// pools. kube-apiserver's flag, on by default as there.
	EnablePriorityAndFairness bool
}

func defaultAPFOptions() APFOptions {
	return APFOptions{EnablePriorityAndFairness: true}
}

func (o *Options) addPriorityAndFairnessFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.EnablePriorityAndFairness, "enable-priority-and-fairness", o.EnablePriorityAndFairness,
		"If true, replace the max-in-flight handler with an enhanced one that queues and dispatches with priority and fairness "+
			"(kube-apiserver's flag and default; --max-requests-inflight plus --max-mutating-requests-inflight is then its total seat limit)")
}

// validatePriorityAndFairness is upstream's rule: with APF the two
// in-flight flags add up to its seats, which must be some.
func (o *Options) validatePriorityAndFairness() []error {
	if o.EnablePriorityAndFairness && !o.Aggregated() && o.MaxRequestsInFlight+o.MaxMutatingRequestsInFlight <= 0 {
		return []error{errors.New("--max-requests-inflight and --max-mutating-requests-inflight must add up to something positive with --enable-priority-and-fairness")}
	}
	return nil
}
