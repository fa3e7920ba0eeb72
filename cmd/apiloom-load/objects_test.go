package main

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestPayload(t *testing.T) {
	p := payload("seq=12 ", 900)
	if len(p) != 900 || !strings.HasPrefix(p, "seq=12 ") {
		t.Fatalf("payload: len %d, prefix %q", len(p), p[:10])
	}
	b, _ := json.Marshal(p)
	if len(b) != 902 {
		t.Fatalf("payload needs escaping: %d bytes of JSON", len(b))
	}
	if got := payload("a-long-tag", 4); got != "a-long-tag" {
		t.Fatalf("payload shorter than its tag = %q", got)
	}
}

func TestObjectFactory(t *testing.T) {
	c := defaultConfig()
	f, err := newObjectFactory(&c)
	if err != nil {
		t.Fatal(err)
	}
	a, b := f.object("a", "x"), f.object("b", "y")
	if a.GetAPIVersion() != "example.apiloom.dev/v1" || a.GetKind() != "Database" || a.GetNamespace() != "bench" {
		t.Fatalf("type and place: %v", a.Object)
	}
	if v, _, _ := unstructured.NestedString(a.Object, "spec", "engine"); v != "postgres" {
		t.Fatalf("base spec not applied: %v", a.Object)
	}
	if v, _, _ := unstructured.NestedString(a.Object, "metadata", "annotations", "load-payload"); len(v) != c.PayloadBytes || v[0] != 'x' {
		t.Fatalf("payload %q", v)
	}
	_ = unstructured.SetNestedField(b.Object, "mysql", "spec", "engine")
	if v, _, _ := unstructured.NestedString(a.Object, "spec", "engine"); v != "postgres" {
		t.Fatal("objects share their spec")
	}
	stampWrite(a, 7, 123)
	if a.GetLabels()[labelSeq] != "7" || a.GetAnnotations()[annotationSent] != "123" {
		t.Fatalf("stamp: %v %v", a.GetLabels(), a.GetAnnotations())
	}
	c.BaseSpec = "not json"
	if _, err := newObjectFactory(&c); err == nil {
		t.Fatal("a bad --spec was accepted")
	}
}

func TestPayloadPatch(t *testing.T) {
	f := &objectFactory{payloadPath: []string{"spec", "version"}, payloadBytes: 12}
	got, err := f.payloadPatch("up")
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"spec":{"version":"upabcdefghij"}}`; string(got) != want {
		t.Errorf("payloadPatch = %s, want %s", got, want)
	}
}
