package strategy

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/utils/ptr"
)

// The defaults kube-apiserver applies when it decodes flowcontrol v1
// (k8s.io/kubernetes pkg/apis/flowcontrol/v1 defaults.go): the APF
// controller reads them, and the validation of the mandatory objects
// compares whole specs, so an object written without them must come out
// as the one upstream stores.

// FlowSchema defaults matchingPrecedence to 1000.
func FlowSchema(obj *flowcontrolv1.FlowSchema) {
	if obj.Spec.MatchingPrecedence == 0 {
		obj.Spec.MatchingPrecedence = 1000
	}
}

// PriorityLevelConfiguration defaults a limited level's
// nominalConcurrencyShares to 30 and lendablePercent to 0, its queuing
// to 64 queues, hands of 8 and 50 requests a queue; an exempt level's
// shares and lendablePercent to 0.
func PriorityLevelConfiguration(obj *flowcontrolv1.PriorityLevelConfiguration) {
	if e := obj.Spec.Exempt; e != nil {
		if e.NominalConcurrencyShares == nil {
			e.NominalConcurrencyShares = ptr.To[int32](0)
		}
		if e.LendablePercent == nil {
			e.LendablePercent = ptr.To[int32](0)
		}
	}
	l := obj.Spec.Limited
	if l == nil {
		return
	}
	if l.NominalConcurrencyShares == nil {
		l.NominalConcurrencyShares = ptr.To[int32](30)
	}
	if l.LendablePercent == nil {
		l.LendablePercent = ptr.To[int32](0)
	}
	if q := l.LimitResponse.Queuing; q != nil {
		if q.HandSize == 0 {
			q.HandSize = 8
		}
		if q.Queues == 0 {
			q.Queues = 64
		}
		if q.QueueLengthLimit == 0 {
			q.QueueLengthLimit = 50
		}
	}
}
