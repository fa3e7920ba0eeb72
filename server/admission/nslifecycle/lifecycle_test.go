package nslifecycle

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/server/storage"
)

// namespaces answers Get from a map and records the resourceVersion each
// read asked for; the rest of storage.Interface is not used by Lifecycle.
type namespaces struct {
	storage.Interface[*corev1.Namespace]
	items map[string]*corev1.Namespace
	reads []string
}

func (n *namespaces) Get(_ context.Context, key string, opts storage.GetOptions) (*corev1.Namespace, error) {
	n.reads = append(n.reads, opts.ResourceVersion)
	if ns, ok := n.items[key]; ok {
		return ns, nil
	}
	return nil, &storage.Error{Err: storage.ErrNotFound, Key: key}
}

var configmaps = schema.GroupResource{Resource: "configmaps"}

func TestAdmit(t *testing.T) {
	src := &namespaces{items: map[string]*corev1.Namespace{
		"live":   {ObjectMeta: metav1.ObjectMeta{Name: "live"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}},
		"ending": {ObjectMeta: metav1.ObjectMeta{Name: "ending"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}},
	}}
	l := New()
	if err := l.AdmitWrite(t.Context(), configmaps, "c", "live", true); !apierrors.IsInternalError(err) {
		t.Fatalf("before Bind: %v", err)
	}
	l.Bind(src)
	ctx := t.Context()
	if err := l.AdmitWrite(ctx, configmaps, "c", "live", true); err != nil {
		t.Fatalf("create in an Active namespace: %v", err)
	}
	if err := l.AdmitWrite(ctx, configmaps, "c", "ending", false); err != nil {
		t.Fatalf("update in a Terminating namespace: %v", err)
	}
	err := l.AdmitWrite(ctx, configmaps, "c", "gone", false)
	if !apierrors.IsNotFound(err) || err.Error() != `namespaces "gone" not found` {
		t.Fatalf("missing namespace: %v", err)
	}
	err = l.AdmitWrite(ctx, configmaps, "", "ending", true)
	var status apierrors.APIStatus
	if s, ok := err.(apierrors.APIStatus); ok { //nolint:errorlint // apierrors' own type
		status = s
	}
	if status == nil || status.Status().Code != 403 ||
		status.Status().Message != "configmaps is forbidden: unable to create new content in namespace ending because it is being terminated" ||
		len(status.Status().Details.Causes) != 1 || status.Status().Details.Causes[0].Type != corev1.NamespaceTerminatingCause {
		t.Fatalf("create by generateName in a Terminating namespace: %+v", err)
	}
	for _, n := range src.reads {
		if n != "0" {
			t.Fatalf("reads %v: want the cache's (resourceVersion 0) only", src.reads)
		}
	}
}

// TestLiveLookupAfterDelete: for liveLookupTTL after a namespace's DELETE,
// its phase is read from etcd (resourceVersion ""), then from the cache
// again; the immortal namespaces are never deleted.
func TestLiveLookupAfterDelete(t *testing.T) {
	src := &namespaces{items: map[string]*corev1.Namespace{"a": {ObjectMeta: metav1.ObjectMeta{Name: "a"}}}}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := New()
	l.now = func() time.Time { return now }
	l.Bind(src)
	for _, name := range Immortal {
		if err := l.AdmitNamespaceDelete(name); !apierrors.IsForbidden(err) || err.Error() != `namespaces "`+name+`" is forbidden: this namespace may not be deleted` {
			t.Fatalf("delete %s: %v", name, err)
		}
	}
	if err := l.AdmitNamespaceDelete("a"); err != nil {
		t.Fatal(err)
	}
	read := func() string {
		src.reads = nil
		if err := l.AdmitWrite(t.Context(), configmaps, "c", "a", true); err != nil {
			t.Fatal(err)
		}
		return src.reads[0]
	}
	if rv := read(); rv != "" {
		t.Fatalf("right after the DELETE read at %q, want a consistent read", rv)
	}
	now = now.Add(liveLookupTTL)
	if rv := read(); rv != "0" {
		t.Fatalf("after the TTL read at %q, want the cache's", rv)
	}
}
