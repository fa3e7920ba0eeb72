package storageerr

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/server/endpoints/deletion"
	"github.com/apiloom/apiloom/server/storage"
)

// Messages kube-apiserver uses, which clients and people recognise.
const (
	// optimisticLockMsg follows "Operation cannot be fulfilled on ..." in a
	// resourceVersion conflict.
	optimisticLockMsg = "the object has been modified; please apply your changes to the latest version and try again"
	// listExpiredMsg is the 410 for a list at an exact, compacted revision.
	listExpiredMsg = "The resourceVersion for the provided list is too old."
	// continueExpiredMsg is the 410 for a compacted continue token when no
	// fresh token could be made.
	continueExpiredMsg = "The provided continue parameter is too old to display a consistent list result. " +
		"You can start a new list without the continue parameter."
	// inconsistentContinueMsg is the 410 for a compacted continue token that
	// comes with a fresh token in the Status' metadata.continue.
	inconsistentContinueMsg = "The provided continue parameter is too old to display a consistent list result. " +
		"You can start a new list without the continue parameter, or use the continue token in this response to " +
		"retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - " +
		"objects that were created, modified, or deleted between the time the first chunk was returned and now may " +
		"show up in the list."
	// tooLargeRVCause is the cause message client-go's reflector looks for.
	tooLargeRVCause = "Too large resource version"
)

// ErrOptimisticLock is the cause of a resourceVersion conflict.
var ErrOptimisticLock = errors.New(optimisticLockMsg)

// Verb is the kind of request an error arose in; it picks between
// kube-apiserver's messages for the same storage error.
type Verb int

const (
	Other    Verb = iota
	List          // a list without a continue token
	Continue      // a list page from a continue token
	Watch
	Update // an update or patch
)

// Status maps err, which may come from storage, to the API error the
// client receives. gr and name fill in the messages ("databases.example.
// apiloom.dev \"x\" not found"); name may be empty for collection requests.
// Errors that already are API errors pass unchanged.
func Status(err error, gr schema.GroupResource, name string, v Verb) error {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return err
	}
	se, ok := storage.AsError(err)
	if !ok {
		return err
	}
	if name == "" && se.Key != "" {
		name = se.Key[strings.LastIndexByte(se.Key, '/')+1:]
	}
	switch {
	case errors.Is(se, storage.ErrNotFound):
		return apierrors.NewNotFound(gr, name)
	case errors.Is(se, storage.ErrExists):
		return apierrors.NewAlreadyExists(gr, name)
	case errors.Is(se, storage.ErrConflict):
		return apierrors.NewConflict(gr, name, ErrOptimisticLock)
	case errors.Is(se, storage.ErrPrecondition):
		detail := se.Detail
		if detail == "" {
			detail = "precondition failed"
		}
		return apierrors.NewConflict(gr, name, errors.New(detail))
	case errors.Is(se, storage.ErrExpired):
		return expiredStatus(se, v)
	case errors.Is(se, storage.ErrTooLargeResourceVersion):
		st := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", se.ResourceVersion, se.CurrentRevision), 1)
		st.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: tooLargeRVCause}}
		return st
	case errors.Is(se, storage.ErrInvalidContinue):
		return apierrors.NewBadRequest("invalid continue token: " + detailOr(se, "malformed token"))
	case errors.Is(se, storage.ErrInvalidResourceVersion):
		return apierrors.NewBadRequest("invalid resource version: " + detailOr(se, "not a revision"))
	case errors.Is(se, storage.ErrTooLarge):
		return apierrors.NewRequestEntityTooLargeError(detailOr(se, "the object is too large to store"))
	case errors.Is(se, storage.ErrInvalidKey):
		return apierrors.NewBadRequest(fmt.Sprintf("invalid name or namespace: %q", se.Key))
	case errors.Is(se, storage.ErrCorrupt):
		return deletion.CorruptStatus(se, gr, v == Update)
	case errors.Is(se, storage.ErrNotCorrupt):
		return deletion.NotCorruptStatus(se, gr, name)
	case errors.Is(se, storage.ErrInsufficientStorage):
		return insufficientStorage(gr, name, se)
	default: // anything new
		return apierrors.NewInternalError(err)
	}
}

// expiredStatus is the 410 Expired for a compacted revision, worded as
// kube-apiserver words it for the request's Verb.
func expiredStatus(se *storage.Error, v Verb) *apierrors.StatusError {
	switch {
	case se.Continue != "":
		st := apierrors.NewResourceExpired(inconsistentContinueMsg)
		st.ErrStatus.ListMeta.Continue = se.Continue
		return st
	case v == Continue:
		return apierrors.NewResourceExpired(continueExpiredMsg)
	case v == List:
		return apierrors.NewResourceExpired(listExpiredMsg)
	default:
		return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", se.ResourceVersion, se.CurrentRevision))
	}
}

// insufficientStorage is the 507 for a write etcd has no space for.
// kube-apiserver passes etcd's NOSPACE through as a bare 500 ("etcdserver:
// mvcc: database space exceeded"); 507 names the condition, and
// apimachinery's generic mapping of a 5xx code gives it reason
// InternalError, so clients treat it as the server error it is. The
// message is storage's explanation: what is full and what to do.
func insufficientStorage(gr schema.GroupResource, name string, se *storage.Error) *apierrors.StatusError {
	msg := "insufficient storage: " + detailOr(se, "etcd has no space for writes")
	st := apierrors.NewGenericServerResponse(http.StatusInsufficientStorage, "", gr, name, msg, 0, false)
	st.ErrStatus.Message = msg
	return st
}

func detailOr(se *storage.Error, fallback string) string {
	if se.Detail != "" {
		return se.Detail
	}
	return fallback
}
