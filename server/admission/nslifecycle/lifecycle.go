// Package nslifecycle is kube-apiserver's NamespaceLifecycle admission:
// no object is written into a namespace that does not exist (404 for the
// namespace) and none is created in one being terminated (403 Forbidden,
// cause NamespaceTerminating); default, kube-system and kube-public are
// never deleted (403). Namespaces are read from the namespaces' watch
// cache, in memory; one the cache has not seen is read from etcd before a
// write is refused (the cache falls through to etcd on a miss), so a
// namespace created just before an object in it is always found, and for
// a while after a namespace's DELETE its phase is read from etcd, so a
// create that follows the DELETE never finds it Active in a cache that is
// behind, as upstream's force-live-lookup cache does.
package nslifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"

	"github.com/apiloom/apiloom/server/storage"
)

// Immortal are the namespaces that may not be deleted, kube-apiserver's.
var Immortal = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic}

// liveLookupTTL is how long after a namespace's DELETE its phase is read
// from etcd rather than the cache (upstream's forceLiveLookupTTL).
const liveLookupTTL = 30 * time.Second

// namespacesResource is what the 404 for a missing namespace names.
var namespacesResource = schema.GroupResource{Resource: "namespaces"}

// Lifecycle admits writes by their namespace. Create it with New and Bind
// it to the namespaces' storage before it admits anything; it is the
// NamespaceLifecycle plugin of the server's admission chain.
type Lifecycle struct {
	// mu guards source and deleted.
	mu     sync.Mutex
	source storage.Interface[*corev1.Namespace]
	// deleted maps the namespaces whose DELETE this server answered to
	// when their phase stops being read from etcd.
	deleted map[string]time.Time
	now     func() time.Time
}

// New returns a Lifecycle with no source yet.
func New() *Lifecycle { return &Lifecycle{deleted: map[string]time.Time{}, now: time.Now} }

// Bind makes src, the namespaces' watch cache (or etcd store), where
// namespaces are read.
func (l *Lifecycle) Bind(src storage.Interface[*corev1.Namespace]) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.source = src
}

// errNotBound is an internal error: the server admitted a write before
// the namespaces' storage was built.
var errNotBound = errors.New("nslifecycle: namespaces are not served yet")

var _ admission.MutationInterface = (*Lifecycle)(nil)

// Handles implements admission.Interface.
func (l *Lifecycle) Handles(admission.Operation) bool { return true }

// Admit implements admission.MutationInterface, where kube-apiserver's
// NamespaceLifecycle runs: a namespace's DELETE by AdmitNamespaceDelete,
// a create or update of a namespaced object by AdmitWrite.
func (l *Lifecycle) Admit(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	gr := a.GetResource().GroupResource()
	switch a.GetOperation() {
	case admission.Delete:
		if gr == namespacesResource && a.GetName() != "" {
			return l.AdmitNamespaceDelete(a.GetName())
		}
		return nil
	case admission.Create, admission.Update:
		if gr == namespacesResource {
			return nil
		}
		return l.AdmitWrite(ctx, gr, a.GetName(), a.GetNamespace(), a.GetOperation() == admission.Create)
	}
	return nil
}

// AdmitWrite is nil when an object of gr named name may be written in
// namespace ns (none for a cluster-scoped object), created when create is
// true, updated otherwise; else the API error: 404 NotFound for the
// namespace when it does not exist, 403 Forbidden for a create into a
// namespace being terminated.
func (l *Lifecycle) AdmitWrite(ctx context.Context, gr schema.GroupResource, name, ns string, create bool) error {
	if ns == "" {
		return nil
	}
	l.mu.Lock()
	src, live := l.source, l.liveLocked(ns)
	l.mu.Unlock()
	if src == nil {
		return apierrors.NewInternalError(errNotBound)
	}
	// RV "0": the cache's memory, or etcd when the cache has not seen it.
	opts := storage.GetOptions{ResourceVersion: "0"}
	if live {
		opts = storage.GetOptions{}
	}
	namespace, err := src.Get(ctx, ns, opts)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return apierrors.NewNotFound(namespacesResource, ns)
	case err != nil:
		return apierrors.NewInternalError(err)
	}
	if !create || namespace.Status.Phase != corev1.NamespaceTerminating {
		return nil
	}
	forbidden := apierrors.NewForbidden(gr, name,
		fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns))
	forbidden.ErrStatus.Details.Causes = append(forbidden.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    corev1.NamespaceTerminatingCause,
		Message: fmt.Sprintf("namespace %s is being terminated", ns),
		Field:   "metadata.namespace",
	})
	return forbidden
}

// AdmitNamespaceDelete is 403 for an
// immortal namespace; any other is noted so that writes into it read its
// phase from etcd for a while.
func (l *Lifecycle) AdmitNamespaceDelete(name string) error {
	for _, n := range Immortal {
		if n == name {
			return apierrors.NewForbidden(namespacesResource, name, errors.New("this namespace may not be deleted"))
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for n, until := range l.deleted {
		if !now.Before(until) {
			delete(l.deleted, n)
		}
	}
	l.deleted[name] = now.Add(liveLookupTTL)
	return nil
}

// liveLocked reports whether ns's phase is to be read from etcd. l.mu must
// be held.
func (l *Lifecycle) liveLocked(ns string) bool {
	until, ok := l.deleted[ns]
	return ok && l.now().Before(until)
}
