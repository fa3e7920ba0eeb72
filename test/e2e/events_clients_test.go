package e2e

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"
)

// TestEventRecorders: client-go's two recorders, unchanged, post events
// that both APIs list: record.EventRecorder (core/v1, which aggregates a
// repeated event by a strategic merge patch of its count) and
// tools/events' recorder (events.k8s.io/v1, with reporting controller and
// action).
func TestEventRecorders(t *testing.T) {
	ts, _ := startServer(t)
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := t.Context()
	eventsNamespace(t, kc, "rec")
	cm, err := kc.CoreV1().ConfigMaps("rec").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "subject"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	legacy := record.NewBroadcaster(record.WithContext(ctx))
	defer legacy.Shutdown()
	legacy.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kc.CoreV1().Events("")})
	old := legacy.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "legacy-ctrl"})
	old.Event(cm, corev1.EventTypeNormal, "Seen", "seen once")
	eventually(t, "the core/v1 recorder's event", func(ctx context.Context) (bool, error) {
		l, err := kc.CoreV1().Events("rec").List(ctx, metav1.ListOptions{FieldSelector: "source=legacy-ctrl"})
		return err == nil && len(l.Items) == 1, err
	})
	old.Event(cm, corev1.EventTypeNormal, "Seen", "seen once")
	eventually(t, "the repeated event's count 2 (patched)", func(ctx context.Context) (bool, error) {
		l, err := kc.CoreV1().Events("rec").List(ctx, metav1.ListOptions{FieldSelector: "reason=Seen"})
		return err == nil && len(l.Items) == 1 && l.Items[0].Count == 2, err
	})

	modern := events.NewBroadcaster(&events.EventSinkImpl{Interface: kc.EventsV1()})
	modern.StartRecordingToSink(ctx.Done())
	defer modern.Shutdown()
	rec := modern.NewRecorder(scheme.Scheme, "example.com/modern-ctrl")
	rec.Eventf(cm, nil, corev1.EventTypeWarning, "Failed", "Reconcile", "could not %s", "reconcile")
	eventually(t, "the events.k8s.io/v1 recorder's event, through core/v1", func(ctx context.Context) (bool, error) {
		l, err := kc.CoreV1().Events("rec").List(ctx, metav1.ListOptions{FieldSelector: "reportingComponent=example.com/modern-ctrl"})
		return err == nil && len(l.Items) == 1 && l.Items[0].Message == "could not reconcile" && l.Items[0].Action == "Reconcile", err
	})
	both, err := kc.EventsV1().Events("rec").List(ctx, metav1.ListOptions{FieldSelector: "regarding.name=subject,regarding.kind=ConfigMap"})
	if err != nil || len(both.Items) != 2 {
		t.Fatalf("events.k8s.io/v1 list of both recorders' events: %v %+v", err, both)
	}
}

// TestEventsKubectl: kubectl get events prints kube-apiserver's columns
// (LAST SEEN, TYPE, REASON, OBJECT, MESSAGE; the rest with -o wide), get
// -w shows an event posted while it watches, and describe shows an
// object's events, which it finds by an involvedObject field selector.
func TestEventsKubectl(t *testing.T) {
	requireKubectl(t)
	ts, _ := startServer(t)
	k := &kubectlEnv{t: t, kubeconfig: ts.Kubeconfig, home: t.TempDir()}
	k.run("create", "namespace", "kev")
	k.run("create", "configmap", "subject", "-n", "kev")
	uid := strings.TrimSpace(k.run("get", "configmap", "subject", "-n", "kev", "-o", "jsonpath={.metadata.uid}"))
	file := filepath.Join(t.TempDir(), "event.yaml")
	writeEvent := func(name, reason, message string) {
		t.Helper()
		ev := `apiVersion: v1
kind: Event
metadata: {name: ` + name + `, namespace: kev}
involvedObject: {kind: ConfigMap, name: subject, namespace: kev, uid: ` + uid + `, apiVersion: v1, fieldPath: "data{a}"}
reason: ` + reason + `
message: "` + message + `  "
type: Normal
source: {component: kubelet, host: n1}
count: 3
firstTimestamp: "` + time.Now().Add(-2*time.Hour).UTC().Format(time.RFC3339) + `"
lastTimestamp: "` + time.Now().Add(-time.Hour).UTC().Format(time.RFC3339) + `"
`
		if err := os.WriteFile(file, []byte(ev), 0o644); err != nil {
			t.Fatal(err)
		}
		k.run("create", "-f", file)
	}
	writeEvent("e1", "Started", "hello")

	out := k.run("get", "events", "-n", "kev")
	if want := "LAST SEEN TYPE REASON OBJECT MESSAGE\n60m Normal Started configmap/subject hello"; squeeze(out) != want {
		t.Fatalf("get events:\n%s\nwant\n%s", out, want)
	}
	out = k.run("get", "events.events.k8s.io", "-n", "kev", "-o", "wide")
	if want := "LAST SEEN TYPE REASON OBJECT SUBOBJECT SOURCE MESSAGE FIRST SEEN COUNT NAME\n60m Normal Started configmap/subject data{a} kubelet, n1 hello 120m 3 e1"; squeeze(out) != want {
		t.Fatalf("get events -o wide:\n%s\nwant\n%s", out, want)
	}

	watchCtx, stopWatch := context.WithTimeout(t.Context(), time.Minute)
	defer stopWatch()
	w := k.cmd(watchCtx, "get", "events", "-n", "kev", "-w", "--no-headers")
	stdout, err := w.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	expectLine(t, lines, "60m Normal Started configmap/subject hello")
	writeEvent("e2", "Updated", "changed")
	expectLine(t, lines, "60m Normal Updated configmap/subject changed")
	stopWatch()
	_ = w.Wait()

	out = k.run("describe", "configmap", "subject", "-n", "kev")
	for _, want := range []string{"Events:", "Normal  Started", "Normal  Updated", "kubelet", "hello", "changed"} {
		if !strings.Contains(out, want) {
			t.Fatalf("describe lacks %q:\n%s", want, out)
		}
	}
}

// squeeze is out with runs of spaces made one, lines kept.
func squeeze(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.Join(lines, "\n")
}
