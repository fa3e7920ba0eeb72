package auditlog

import (
	"context"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/audit"
)

// sink keeps the last event it was given.
type sink struct{ last *auditinternal.Event }

func (s *sink) ProcessEvents(evs ...*auditinternal.Event) bool {
	s.last = evs[len(evs)-1].DeepCopy()
	return true
}

// audited is a request context audited at level, and the sink its event
// goes to on flush.
func audited(t *testing.T, level auditinternal.Level) (context.Context, func() *auditinternal.Event) {
	SetInUse()
	ctx := audit.WithAuditContext(context.Background())
	s := &sink{}
	if err := audit.AuditContextFrom(ctx).Init(audit.RequestAuditConfig{Level: level}, s); err != nil {
		t.Fatal(err)
	}
	return ctx, func() *auditinternal.Event {
		audit.AuditContextFrom(ctx).ProcessEventStage(ctx, auditinternal.StageResponseComplete)
		return s.last
	}
}

var gvr = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func encode(obj runtime.Object) ([]byte, error) { return json.Marshal(obj) }

func configMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", UID: "u1"}}
}

func TestLevel(t *testing.T) {
	SetInUse()
	if l := Level(context.Background()); l != auditinternal.LevelNone {
		t.Errorf("no audit context: %q", l)
	}
	// An Audit-ID without audit (the aggregator's): not audited.
	if Audited(audit.WithAuditContext(context.Background())) {
		t.Error("an uninitialized audit context is audited")
	}
	ctx, _ := audited(t, auditinternal.LevelRequest)
	if Level(ctx) != auditinternal.LevelRequest || !Audited(ctx) {
		t.Errorf("level %q", Level(ctx))
	}
}

func TestObjectsByLevel(t *testing.T) {
	for _, c := range []struct {
		level             auditinternal.Level
		request, response bool
	}{
		{auditinternal.LevelMetadata, false, false},
		{auditinternal.LevelRequest, true, false},
		{auditinternal.LevelRequestResponse, true, true},
	} {
		ctx, flush := audited(t, c.level)
		RequestObject(ctx, configMap(), gvr, "", encode)
		ResponseObject(ctx, configMap(), encode)
		ev := flush()
		if got := ev.RequestObject != nil; got != c.request {
			t.Errorf("%s: request object %v", c.level, got)
		}
		if got := ev.ResponseObject != nil; got != c.response {
			t.Errorf("%s: response object %v", c.level, got)
		}
		if ev.ObjectRef == nil || ev.ObjectRef.Name != "a" || ev.ObjectRef.Namespace != "ns" || ev.ObjectRef.UID != "u1" || ev.ObjectRef.Resource != "configmaps" {
			t.Errorf("%s: objectRef %+v", c.level, ev.ObjectRef)
		}
	}
}

func TestStatusAtMetadata(t *testing.T) {
	ctx, flush := audited(t, auditinternal.LevelMetadata)
	ResponseObject(ctx, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status: metav1.StatusFailure, Code: 409, Reason: metav1.StatusReasonConflict, Message: "taken"}, encode)
	ev := flush()
	if ev.ResponseStatus == nil || ev.ResponseStatus.Code != 409 || ev.ResponseStatus.Message != "taken" || ev.ResponseObject != nil {
		t.Errorf("status %+v, object %v", ev.ResponseStatus, ev.ResponseObject)
	}
}

func TestPatchAndJSON(t *testing.T) {
	ctx, flush := audited(t, auditinternal.LevelMetadata)
	RequestPatch(ctx, []byte(`{}`))
	ResponseJSON(ctx, []byte(`{}`))
	if ev := flush(); ev.RequestObject != nil || ev.ResponseObject != nil {
		t.Errorf("Metadata recorded objects: %v %v", ev.RequestObject, ev.ResponseObject)
	}
	ctx, flush = audited(t, auditinternal.LevelRequestResponse)
	RequestPatch(ctx, []byte(`{"data":{}}`))
	ResponseJSON(ctx, []byte(`{"kind":"ConfigMapList"}`))
	ev := flush()
	if string(ev.RequestObject.Raw) != `{"data":{}}` || string(ev.ResponseObject.Raw) != `{"kind":"ConfigMapList"}` {
		t.Errorf("request %s, response %s", ev.RequestObject.Raw, ev.ResponseObject.Raw)
	}
	// Nothing without audit, and no panic.
	RequestPatch(context.Background(), []byte(`{}`))
	ResponseJSON(context.Background(), []byte(`{}`))
	RequestObject(context.Background(), configMap(), gvr, "", encode)
	ResponseObject(context.Background(), configMap(), encode)
}

// BenchmarkOff is what a request pays per call with audit off in the
// process (no SetInUse): nothing, not even the lookup through a context
// as deep as a request's (a dozen values). Run alone: the other tests
// call SetInUse.
func BenchmarkOff(b *testing.B) {
	type key int
	ctx := context.Background()
	for i := range 12 {
		ctx = context.WithValue(ctx, key(i), i)
	}
	b.ReportAllocs()
	for b.Loop() {
		if Audited(ctx) {
			b.Fatal("audited")
		}
	}
}
