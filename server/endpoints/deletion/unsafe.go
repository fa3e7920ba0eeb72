package deletion

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/apiloom/apiloom/server/storage"
)

// The unsafe delete (KEP-3926) removes an object whose stored value does
// not decode without reading it, so no finalizer, admission or other check
// of its content runs. Only those trusted to break a cluster's invariants
// may do it (AuthorizeUnsafe).

// UnsafeVerb is the verb the unsafe delete needs besides delete.
const UnsafeVerb = "unsafe-delete-ignore-read-errors"

// Unsafe reports whether opts ask for the unsafe delete
// (ignoreStoreReadErrorWithClusterBreakingPotential).
func Unsafe(opts metav1.DeleteOptions) bool {
	o := opts.IgnoreStoreReadErrorWithClusterBreakingPotential
	return o != nil && *o
}

// AuthorizeUnsafe is nil when the user of ctx may do UnsafeVerb on the
// object namespace/name of resource gr in version gv, and otherwise the
// 403 (or, without an authorizer, the 500) kube-apiserver answers.
func AuthorizeUnsafe(ctx context.Context, authz authorizer.Authorizer, gv schema.GroupVersion, gr schema.GroupResource, namespace, name string) error {
	if authz == nil {
		return apierrors.NewInternalError(errors.New("no authorizer provided, unable to authorize unsafe delete"))
	}
	u, _ := genericrequest.UserFrom(ctx)
	attrs := authorizer.AttributesRecord{
		User: u, Verb: UnsafeVerb, Namespace: namespace, Name: name,
		APIGroup: gv.Group, APIVersion: gv.Version, Resource: gr.Resource, ResourceRequest: true,
	}
	decision, reason, err := authz.Authorize(ctx, attrs)
	switch {
	case err != nil:
		return apierrors.NewForbidden(gr, name, fmt.Errorf("error while checking permission for %q, %w", UnsafeVerb, err))
	case decision != authorizer.DecisionAllow:
		return apierrors.NewForbidden(gr, name, fmt.Errorf("not permitted to do %q, reason: %s", UnsafeVerb, reason))
	}
	return nil
}

// CorruptStatus is the API error for an object whose stored value does not
// decrypt or decode (storage.ErrCorrupt), worded as kube-apiserver words it for a
// custom resource. A read or a delete is a 500 InternalError quoting its
// storage error, which names the key and the decode error; an update
// (update is true), whose storage layer returns the decode error
// unwrapped, is a 500 with only that message and no reason.
func CorruptStatus(se *storage.Error, gr schema.GroupResource, update bool) error {
	cause := fmt.Sprintf("object not decodable revision=%d: %s", se.ResourceVersion, se.Detail)
	if se.Untransformable {
		// A value that does not decrypt; kube-apiserver's transformer
		// wrapper knows no revision and names 0.
		cause = "data from the storage is not transformable revision=0: " + se.Detail
	}
	if update {
		return &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: cause,
		}}
	}
	return apierrors.NewInternalError(fmt.Errorf("StorageError: corrupt object, Code: 7, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: %s",
		registryKey(gr, se.Key), cause))
}

// NotCorruptStatus is the 409 Conflict kube-apiserver answers an unsafe
// delete of an object that decodes with (storage.ErrNotCorrupt); its
// storage error names the full etcd key.
func NotCorruptStatus(se *storage.Error, gr schema.GroupResource, name string) error {
	return apierrors.NewConflict(gr, name, fmt.Errorf("StorageError: invalid object, Code: 4, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: %s",
		se.StoredKey, se.Detail))
}

// registryKey is kube-apiserver's key of an object relative to the
// server-wide etcd prefix, "/<group>/<resource>/<namespace>/<name>" for a
// custom resource, which is where storage.ResourcePrefix puts it too.
func registryKey(gr schema.GroupResource, key string) string {
	var b strings.Builder
	b.WriteByte('/')
	if gr.Group != "" {
		b.WriteString(gr.Group)
		b.WriteByte('/')
	}
	b.WriteString(gr.Resource)
	b.WriteByte('/')
	b.WriteString(key)
	return b.String()
}
