package traffic

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestClassify(t *testing.T) {
	gr := schema.GroupResource{Group: "example.apiloom.dev", Resource: "databases"}
	for _, tc := range []struct {
		err         error
		outcome     Outcome
		unavailable bool
	}{
		{nil, Acknowledged, false},
		{apierrors.NewConflict(gr, "a", errors.New("x")), Failed, false},
		{apierrors.NewNotFound(gr, "a"), Failed, false},
		{apierrors.NewTooManyRequests("busy", 1), Failed, true},
		{apierrors.NewInternalError(errors.New("etcd")), Unknown, true},
		{apierrors.NewTimeoutError("slow", 1), Unknown, true},
		{&apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 507, Reason: metav1.StatusReasonInternalError}}, Failed, true},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), Failed, true},
		{errors.New("unexpected EOF"), Unknown, true},
	} {
		if o, u := classify(tc.err); o != tc.outcome || u != tc.unavailable {
			t.Errorf("classify(%v) = %v %v, want %v %v", tc.err, o, u, tc.outcome, tc.unavailable)
		}
	}
}
