package e2e

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/apiloom/apiloom/server/apiserver"
)

// eventsNamespace creates the namespace ns for a test's events.
func eventsNamespace(t *testing.T, kc kubernetes.Interface, ns string) {
	t.Helper()
	if _, err := kc.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", ns, err)
	}
}

// TestEventsBothAPIs: an Event written through core/v1 reads through
// events.k8s.io/v1 and the other way round: one stored object at one key,
// one resourceVersion, served in both groups with the fields renamed, as
// kube-apiserver serves it; an update through one group is seen by the
// other, and a delete through either removes it from both.
func TestEventsBothAPIs(t *testing.T) {
	ts, _ := startServer(t)
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := t.Context()
	eventsNamespace(t, kc, "ev")

	core, err := kc.CoreV1().Events("ev").Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "old"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "ev", Name: "p", UID: "u-1", APIVersion: "v1"},
		Reason:         "Started", Message: "started the pod", Type: corev1.EventTypeNormal,
		Source: corev1.EventSource{Component: "kubelet", Host: "node-1"}, Count: 2,
		FirstTimestamp: metav1.NewTime(time.Unix(1700000000, 0)), LastTimestamp: metav1.NewTime(time.Unix(1700000060, 0)),
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create through core/v1: %v", err)
	}
	ev, err := kc.EventsV1().Events("ev").Get(ctx, "old", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get through events.k8s.io/v1: %v", err)
	}
	if ev.Regarding.Name != "p" || ev.Note != "started the pod" || ev.DeprecatedSource.Component != "kubelet" || ev.DeprecatedCount != 2 ||
		!ev.DeprecatedLastTimestamp.Equal(&core.LastTimestamp) || ev.ResourceVersion != core.ResourceVersion || ev.UID != core.UID {
		t.Fatalf("events.k8s.io/v1 view: %+v", ev)
	}

	now := metav1.NewMicroTime(time.Now().Truncate(time.Microsecond))
	created, err := kc.EventsV1().Events("ev").Create(ctx, &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "new"},
		EventTime:  now, ReportingController: "example.com/ctrl", ReportingInstance: "ctrl-1", Action: "Reconcile",
		Reason: "Synced", Note: "synced", Type: corev1.EventTypeWarning,
		Regarding: corev1.ObjectReference{Kind: "Database", Namespace: "ev", Name: "db", APIVersion: "example.apiloom.dev/v1"},
		Related:   &corev1.ObjectReference{Kind: "Secret", Namespace: "ev", Name: "creds"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create through events.k8s.io/v1: %v", err)
	}
	got, err := kc.CoreV1().Events("ev").Get(ctx, "new", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get through core/v1: %v", err)
	}
	if got.InvolvedObject.Name != "db" || got.Message != "synced" || got.ReportingController != "example.com/ctrl" || got.Related == nil ||
		got.Related.Name != "creds" || !got.EventTime.Equal(&now) || got.ResourceVersion != created.ResourceVersion {
		t.Fatalf("core/v1 view: %+v", got)
	}

	// An update through core/v1 is the events.k8s.io/v1 object's too.
	got.Series = &corev1.EventSeries{Count: 2, LastObservedTime: now}
	updated, err := kc.CoreV1().Events("ev").Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update through core/v1: %v", err)
	}
	ev, err = kc.EventsV1().Events("ev").Get(ctx, "new", metav1.GetOptions{})
	if err != nil || ev.Series == nil || ev.Series.Count != 2 || ev.ResourceVersion != updated.ResourceVersion {
		t.Fatalf("events.k8s.io/v1 after the update: %v %+v", err, ev)
	}
	// Managed fields are kept across the groups: the create's, recorded
	// in events.k8s.io/v1, and the update's, in v1.
	versions := map[string]bool{}
	for _, m := range ev.ManagedFields {
		versions[m.APIVersion] = true
	}
	if !versions["events.k8s.io/v1"] || !versions["v1"] {
		t.Fatalf("managed fields %+v, want entries of events.k8s.io/v1 and v1", ev.ManagedFields)
	}

	for _, list := range []func() (int, error){
		func() (int, error) {
			l, err := kc.CoreV1().Events("ev").List(ctx, metav1.ListOptions{})
			return len(l.Items), err
		},
		func() (int, error) {
			l, err := kc.EventsV1().Events("ev").List(ctx, metav1.ListOptions{})
			return len(l.Items), err
		},
	} {
		if n, err := list(); err != nil || n != 2 {
			t.Fatalf("list: %d events, %v; want 2", n, err)
		}
	}
	if err := kc.EventsV1().Events("ev").Delete(ctx, "old", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete through events.k8s.io/v1: %v", err)
	}
	if l, err := kc.CoreV1().Events("ev").List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 1 || l.Items[0].Name != "new" {
		t.Fatalf("core/v1 list after the delete: %v %+v", err, l)
	}
}

// TestEventsExpire: with --event-ttl, an Event expires that long after its
// last write: etcd's lease deletes it, watchers of both APIs see DELETED,
// and it leaves the watch cache (a list from the cache no longer has it).
// etcd counts leases in whole seconds and raises very short ones to its
// minimum, so this waits a few seconds, with a deadline.
func TestEventsExpire(t *testing.T) {
	ts, _ := startServer(t, func(o *apiserver.Options) { o.EventTTL = time.Second })
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := t.Context()
	eventsNamespace(t, kc, "ttl")
	created, err := kc.CoreV1().Events("ttl").Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "short"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "ttl", Name: "p"},
		Reason:         "Started", Type: corev1.EventTypeNormal,
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	opts := metav1.ListOptions{ResourceVersion: created.ResourceVersion}
	coreW, err := kc.CoreV1().Events("ttl").Watch(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer coreW.Stop()
	evW, err := kc.EventsV1().Events("ttl").Watch(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer evW.Stop()
	deadline := time.After(30 * time.Second)
	for _, w := range []watch.Interface{coreW, evW} {
		select {
		case e := <-w.ResultChan():
			name := ""
			if o, ok := e.Object.(metav1.Object); ok {
				name = o.GetName()
			}
			if e.Type != watch.Deleted || name != "short" {
				t.Fatalf("event %s of %q, want DELETED of short", e.Type, name)
			}
		case <-deadline:
			t.Fatal("no DELETED within 30s of a 1s TTL")
		}
	}
	l, err := kc.CoreV1().Events("ttl").List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil || len(l.Items) != 0 {
		t.Fatalf("list from the cache after expiry: %v %+v", err, l.Items)
	}
}
