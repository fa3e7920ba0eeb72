package endpoints

import (
	"errors"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// wantClientError fails unless err is an API error with a 4xx code: bad
// input must never be a 500 or a panic.
func wantClientError(t *testing.T, what string, err error) {
	t.Helper()
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		t.Fatalf("%s: %v is not a Status", what, err)
	}
	if s := responsewriters.ToStatus(err); s.Code < 400 || s.Code > 499 || s.Reason == "" || s.Message == "" {
		t.Fatalf("%s: %d %s %q, want a 4xx Status", what, s.Code, s.Reason, s.Message)
	}
}

// FuzzListOptions feeds arbitrary query strings and Accept headers to the
// parsing of list and watch requests. The request package's
// FuzzQueryOptions fuzzes the parsing of every kind of options alone.
func FuzzListOptions(f *testing.F) {
	for _, s := range []string{
		"", "watch=true&resourceVersion=0", "labelSelector=a%3Db,c+in+(x,y),!d&fieldSelector=metadata.name%3Dx",
		"fieldSelector=spec.color!%3Dred,metadata.namespace%3D%5C%3D", "limit=500&continue=abc", "resourceVersionMatch=Exact&resourceVersion=5",
		"watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=300",
		"labelSelector=a+in+(", "limit=-1", "timeoutSeconds=x", "fieldSelector=a%3D%3D%3Db",
	} {
		f.Add(s, "application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
	}
	h := NewResource(storagetest.Definition(), nil).(*handler[*widget])
	f.Fuzz(func(t *testing.T, query, accept string) {
		q, _ := url.ParseQuery(query)
		for _, name := range []string{"", "x"} {
			if _, err := h.parseListOptions(q, "ns", name); err != nil {
				wantClientError(t, "list options "+query, err)
			}
		}
		r := httptest.NewRequest("GET", "/", nil)
		r.URL.RawQuery = query
		r.Header.Set("Accept", accept)
		for _, a := range []negotiation.Answer{negotiation.OneObject, negotiation.ObjectList, negotiation.EventStream} {
			if _, err := negotiation.Negotiate(r, a, negotiation.Formats{CBOR: true, Protobuf: true}); err != nil {
				wantClientError(t, "accept "+accept, err)
			}
		}
	})
}

// FuzzCreateBody feeds arbitrary bodies to the decoding and preparation of
// a create, in every fieldValidation mode and body format.
func FuzzCreateBody(f *testing.F) {
	for _, s := range []string{
		`{"apiVersion":"storagetest.apiloom.dev/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"size":1,"color":"red"}}`,
		`{"metadata":{"generateName":"x-","labels":{"a":"b"}},"spec":{"size":"1"}}`, `{"kind":"Gadget"}`, `{"apiVersion":"v1"}`,
		`{"metadata":{"name":"a","name":"b"}}`, `[]`, `null`, `{"metadata":{"name":"A_B","finalizers":["x"]}}`,
		"metadata:\n  name: y\n", `{"metadata":{"namespace":"other","name":"n"}}`, `{"metadata":{"ownerReferences":[{}]}}`,
	} {
		f.Add([]byte(s), "application/json", "Strict")
	}
	h := NewResource(storagetest.Definition(), nil).(*handler[*widget])
	f.Fuzz(func(t *testing.T, body []byte, contentType, fieldValidation string) {
		q := url.Values{"fieldValidation": {fieldValidation}}
		opts, err := request.ParseCreateOptions(q)
		if err != nil {
			wantClientError(t, "create options", err)
			return
		}
		r := httptest.NewRequest("POST", "/", strings.NewReader(string(body)))
		r.Header.Set("Content-Type", contentType)
		in, err := h.decodeObject(r, body, opts)
		if err != nil {
			wantClientError(t, "decode", err)
			return
		}
		if err := h.prepareCreate(t.Context(), in.obj, in.form, "ns", time.Now()); err != nil {
			wantClientError(t, "prepare", err)
			return
		}
		if in.obj.Name == "" || in.obj.Namespace != "ns" || in.obj.UID == "" || in.obj.ResourceVersion != "" {
			t.Fatalf("prepared object %+v", in.obj.ObjectMeta)
		}
	})
}
