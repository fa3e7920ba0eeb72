package apiserver

import (
	"net/http/httptest"
	"testing"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct{ method, url, verb, resource string }{
		{"GET", "/apis/g/v1/namespaces/ns/foos", "list", "foos"},
		{"GET", "/apis/g/v1/foos?watch=true", "watch", "foos"},
		{"GET", "/apis/g/v1/namespaces/ns/foos/x", "get", "foos"},
		{"PUT", "/apis/g/v1/namespaces/ns/foos/x/status", "update", "foos/status"},
		{"PATCH", "/apis/g/v1/foos/x", "patch", "foos"},
		{"POST", "/apis/g/v1/namespaces/ns/foos", "create", "foos"},
		{"DELETE", "/apis/g/v1/namespaces/ns/foos/x", "delete", "foos"},
		{"DELETE", "/apis/g/v1/namespaces/ns/foos", "deletecollection", "foos"},
		{"GET", "/apis/g/v1", "get", "other"},
		{"GET", "/openapi/v3", "get", "other"},
	} {
		verb, resource := classify(httptest.NewRequest(tc.method, tc.url, nil))
		if verb != tc.verb || resource != tc.resource {
			t.Errorf("%s %s: got %s %s, want %s %s", tc.method, tc.url, verb, resource, tc.verb, tc.resource)
		}
	}
}
