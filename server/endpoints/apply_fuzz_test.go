package endpoints

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// wantApplyError fails unless err is what kube-apiserver answers a bad
// apply with: a 4xx Status, or the reasonless 500 it gives a configuration
// its schema refuses (an undeclared field, a value of the wrong type).
func wantApplyError(t *testing.T, what string, err error) {
	t.Helper()
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		t.Fatalf("%s: %v is not a Status", what, err)
	}
	s := responsewriters.ToStatus(err)
	if s.Code == http.StatusInternalServerError && s.Reason == "" && strings.HasPrefix(s.Message, "failed to create typed patch object") {
		return
	}
	if s.Code < 400 || s.Code > 499 || s.Reason == "" || s.Message == "" {
		t.Fatalf("%s: %d %s %q, want a 4xx Status", what, s.Code, s.Reason, s.Message)
	}
}

// FuzzApplyBody feeds arbitrary apply bodies, in every fieldValidation
// mode, with and without force, to the decoding and merging of a
// server-side apply, both into a new object (a create) and into a stored
// one owned by another manager, and then to the preparation of the write.
// Nothing may panic, every refusal must be a Status, and every result
// must carry managed fields that parse.
func FuzzApplyBody(f *testing.F) {
	for _, s := range []string{
		widgetYAML("w", "spec: {size: 2, color: blue}"),
		widgetYAML("w", "metadata: {name: w, labels: {a: b}, finalizers: [x, y]}", "status: {phase: Ready}"),
		`{"apiVersion":"storagetest.apiloom.dev/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":1}}`,
		widgetYAML("w", "spec: {size: 1, size: 2}"), widgetYAML("w", "spec: {bogus: 1}"), widgetYAML("w", "spec: {size: x}"),
		widgetYAML("w", "metadata: {name: w, managedFields: [{}]}"), widgetYAML("w", "metadata: {name: w, uid: u, resourceVersion: \"9\"}"),
		"apiVersion: storagetest.apiloom.dev/v2\nkind: Widget", "kind: Gadget", "[]", "null", "", "{{{", "a: [", "- a\n- b",
		widgetYAML("w", "metadata: {name: w, finalizers: [x, x]}"), widgetYAML("w", "spec: {size: 1e400}"), widgetYAML("w", "spec: !!binary AAAA"),
	} {
		f.Add([]byte(s), "Strict", false)
	}
	h := NewResource(storagetest.Definition(), nil, WithTypeConverter(testTypeConverter(f))).(*handler[*widget])
	rt := route{namespace: "ns", name: "w"}
	seed := &applier[*widget]{fm: h.managed.For(""), body: []byte(widgetYAML("w", "spec: {size: 1, color: red}")), opts: request.WriteOptions{FieldManager: "owner"}}
	stored, err := seed.applyTo(h.newObject())
	if err != nil {
		f.Fatal(err)
	}
	stored.Namespace, stored.UID, stored.ResourceVersion = "ns", "uid-1", "5"

	f.Fuzz(func(t *testing.T, body []byte, fieldValidation string, force bool) {
		opts, err := request.ParsePatchOptions(map[string][]string{"fieldManager": {"fuzz"}, "fieldValidation": {fieldValidation}}, negotiation.MediaApplyPatch)
		if err != nil {
			wantClientError(t, "patch options", err)
			return
		}
		opts.Force = force
		for _, current := range []*widget{h.newObject(), copyObject(stored)} {
			a := &applier[*widget]{fm: h.managed.For(""), body: body, opts: opts}
			obj, err := a.applyTo(current)
			if err != nil {
				wantApplyError(t, "apply", err)
				continue
			}
			if err := managedfields.ValidateManagedFields(obj.GetManagedFields()); err != nil || len(obj.GetManagedFields()) == 0 {
				t.Fatalf("apply left managed fields %+v: %v", obj.GetManagedFields(), err)
			}
			if err := h.checkName(obj, rt); err != nil {
				wantClientError(t, "name", err)
				continue
			}
			if current.UID == "" {
				err = h.prepareCreate(t.Context(), obj, nil, rt.namespace, time.Now())
			} else {
				_, err = h.prepareWrite(t.Context(), obj, current, nil, rt)
			}
			if err != nil {
				wantClientError(t, "prepare", err)
				continue
			}
			if obj.GetObjectKind().GroupVersionKind() != h.gvk || obj.Namespace != "ns" {
				t.Fatalf("applied object %+v %+v", obj.TypeMeta, obj.ObjectMeta)
			}
			for _, en := range obj.ManagedFields {
				if en.Manager == "fuzz" && en.Operation != metav1.ManagedFieldsOperationApply {
					t.Fatalf("apply recorded as %+v", en)
				}
			}
		}
	})
}
