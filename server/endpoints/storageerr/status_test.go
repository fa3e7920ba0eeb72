package storageerr

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
	"github.com/apiloom/apiloom/server/storage"
)

func TestStorageStatus(t *testing.T) {
	gr := schema.GroupResource{Group: "example.apiloom.dev", Resource: "databases"}
	for _, tc := range []struct {
		name   string
		err    error
		Verb   Verb
		code   int32
		reason metav1.StatusReason
		msg    string
		check  func(t *testing.T, s metav1.Status)
	}{
		{name: "not found", err: &storage.Error{Err: storage.ErrNotFound, Key: "ns/x"}, code: 404, reason: metav1.StatusReasonNotFound,
			msg: `databases.example.apiloom.dev "x" not found`,
			check: func(t *testing.T, s metav1.Status) {
				if s.Details.Name != "x" || s.Details.Kind != "databases" || s.Details.Group != "example.apiloom.dev" {
					t.Errorf("details %+v", s.Details)
				}
			}},
		{name: "exists", err: &storage.Error{Err: storage.ErrExists, Key: "x"}, code: 409, reason: metav1.StatusReasonAlreadyExists,
			msg: `databases.example.apiloom.dev "x" already exists`},
		{name: "conflict", err: fmt.Errorf("wrapped: %w", &storage.Error{Err: storage.ErrConflict, Key: "ns/x"}), code: 409, reason: metav1.StatusReasonConflict,
			msg: `Operation cannot be fulfilled on databases.example.apiloom.dev "x": the object has been modified; please apply your changes to the latest version and try again`},
		{name: "precondition", err: &storage.Error{Err: storage.ErrPrecondition, Key: "ns/x", Detail: "Precondition failed: UID in precondition: a, UID in object meta: b"},
			code: 409, reason: metav1.StatusReasonConflict,
			msg: `Operation cannot be fulfilled on databases.example.apiloom.dev "x": Precondition failed: UID in precondition: a, UID in object meta: b`},
		{name: "watch expired", err: &storage.Error{Err: storage.ErrExpired, ResourceVersion: 5, CurrentRevision: 40}, Verb: Watch,
			code: 410, reason: metav1.StatusReasonExpired, msg: "too old resource version: 5 (40)"},
		{name: "list expired", err: &storage.Error{Err: storage.ErrExpired, ResourceVersion: 5}, Verb: List,
			code: 410, reason: metav1.StatusReasonExpired, msg: "The resourceVersion for the provided list is too old."},
		{name: "continue expired", err: &storage.Error{Err: storage.ErrExpired, Continue: "tok"}, Verb: Continue,
			code: 410, reason: metav1.StatusReasonExpired, msg: inconsistentContinueMsg,
			check: func(t *testing.T, s metav1.Status) {
				if s.Continue != "tok" {
					t.Errorf("continue %q", s.Continue)
				}
			}},
		{name: "continue expired without token", err: &storage.Error{Err: storage.ErrExpired}, Verb: Continue,
			code: 410, reason: metav1.StatusReasonExpired, msg: continueExpiredMsg},
		{name: "too large", err: &storage.Error{Err: storage.ErrTooLargeResourceVersion, ResourceVersion: 100, CurrentRevision: 7},
			code: 504, reason: metav1.StatusReasonTimeout, msg: "Timeout: Too large resource version: 100, current: 7", // as upstream
			check: func(t *testing.T, s metav1.Status) {
				if len(s.Details.Causes) != 1 || s.Details.Causes[0].Type != metav1.CauseTypeResourceVersionTooLarge || s.Details.Causes[0].Message != "Too large resource version" || s.Details.RetryAfterSeconds != 1 {
					t.Errorf("details %+v", s.Details)
				}
			}},
		{name: "bad continue", err: &storage.Error{Err: storage.ErrInvalidContinue, Detail: "bad base64"}, code: 400, reason: metav1.StatusReasonBadRequest,
			msg: "invalid continue token: bad base64"},
		{name: "bad resource version", err: &storage.Error{Err: storage.ErrInvalidResourceVersion, Detail: `"x"`}, code: 400, reason: metav1.StatusReasonBadRequest},
		{name: "bad key", err: &storage.Error{Err: storage.ErrInvalidKey, Key: "a/b/c"}, code: 400, reason: metav1.StatusReasonBadRequest},
		{name: "insufficient storage", err: &storage.Error{Err: storage.ErrInsufficientStorage, Key: "ns/x", Detail: "the disk is full; free space on it"},
			code: 507, reason: metav1.StatusReasonInternalError, msg: "insufficient storage: the disk is full; free space on it",
			check: func(t *testing.T, s metav1.Status) {
				if s.Details.Name != "x" || s.Details.Kind != "databases" || s.Details.Group != "example.apiloom.dev" {
					t.Errorf("details %+v", s.Details)
				}
			}},
		{name: "corrupt", err: &storage.Error{Err: storage.ErrCorrupt, Key: "ns/x"}, code: 500, reason: metav1.StatusReasonInternalError},
		{name: "api errors pass", err: apierrors.NewBadRequest("x"), code: 400, reason: metav1.StatusReasonBadRequest, msg: "x"},
		{name: "too large body", err: &http.MaxBytesError{Limit: 3}, code: 413, reason: metav1.StatusReasonRequestEntityTooLarge, msg: "Request entity too large: limit is 3"},
		{name: "deadline", err: context.DeadlineExceeded, code: 504, reason: metav1.StatusReasonTimeout},
		{name: "other", err: errors.New("boom"), code: 500, reason: metav1.StatusReasonInternalError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := responsewriters.ToStatus(Status(tc.err, gr, "", tc.Verb))
			if s.Code != tc.code || s.Reason != tc.reason || s.Status != metav1.StatusFailure {
				t.Fatalf("got %d %s %q", s.Code, s.Reason, s.Message)
			}
			if tc.msg != "" && s.Message != tc.msg {
				t.Fatalf("message\n got %q\nwant %q", s.Message, tc.msg)
			}
			if tc.check != nil {
				tc.check(t, s)
			}
		})
	}
}
