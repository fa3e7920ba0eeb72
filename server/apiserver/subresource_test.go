package apiserver

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/component-helpers/auth/rbac/validation"

	"github.com/apiloom/apiloom/server/rbacbootstrap"
	"github.com/apiloom/apiloom/server/resource"
)

// A Database with its own subresources, as apiserver-gen describes it.
func customDatabase() *resource.Info {
	return &resource.Info{Group: "example.apiloom.dev", Version: "v1", Kind: "Database", Plural: "databases", Namespaced: true,
		Subresources: []resource.SubresourceInfo{
			{Name: "backup", Verbs: []string{"create"}, Type: resource.Action},
			{Name: "connection", Verbs: []string{"get"}, Type: resource.View},
			{Name: "logs", Verbs: []string{"get"}, Type: resource.Stream},
		}}
}

const dbPath = "/apis/example.apiloom.dev/v1/namespaces/ns/databases/db1/"

// TestCustomSubresourceRequestInfo: a request to a kind's own subresource
// is, to authorization, audit and admission, the parent's resource with
// that subresource: a POST creates (an action), a GET gets (a view, a
// stream, whatever its options).
func TestCustomSubresourceRequestInfo(t *testing.T) {
	for _, tc := range []struct{ method, path, verb, subresource string }{
		{"POST", dbPath + "backup?dryRun=All", "create", "backup"},
		{"GET", dbPath + "connection", "get", "connection"},
		{"GET", dbPath + "logs?follow=true&tailLines=10", "get", "logs"},
		{"GET", dbPath + "logs?watch=true", "get", "logs"}, // only a collection or a name is watched
	} {
		info, err := requestInfoResolver().NewRequestInfo(httptest.NewRequest(tc.method, tc.path, nil))
		if err != nil {
			t.Fatal(err)
		}
		if !info.IsResourceRequest || info.Verb != tc.verb || info.APIGroup != "example.apiloom.dev" || info.APIVersion != "v1" ||
			info.Namespace != "ns" || info.Resource != "databases" || info.Name != "db1" || info.Subresource != tc.subresource {
			t.Errorf("%s %s: %+v", tc.method, tc.path, *info)
		}
	}
}

// rolesAuthorizer allows what the ClusterRoles bound to each user allow,
// matching as RBAC matches (server/authz/rbac): the resource with its
// subresource, "databases/backup".
type rolesAuthorizer struct {
	byUser map[string]*rbacv1.ClusterRole
	seen   *[]authorizer.Attributes
}

func (a rolesAuthorizer) Authorize(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	*a.seen = append(*a.seen, attrs)
	role := a.byUser[attrs.GetUser().GetName()]
	res := attrs.GetResource()
	if attrs.GetSubresource() != "" {
		res += "/" + attrs.GetSubresource()
	}
	want := []rbacv1.PolicyRule{{APIGroups: []string{attrs.GetAPIGroup()}, Resources: []string{res}, Verbs: []string{attrs.GetVerb()}}}
	if ok, _ := validation.Covers(role.Rules, want); ok && attrs.IsResourceRequest() {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// TestCustomSubresourceAuthorization: the server's authorization filter
// asks about "databases" with subresource "backup", verb create, and the
// roles apiloom generates for the group decide: admin and edit may run an
// action, view may only read views and streams.
func TestCustomSubresourceAuthorization(t *testing.T) {
	roles := rbacbootstrap.UserKindRoles([]*resource.Info{customDatabase()})
	var seen []authorizer.Attributes
	authz := rolesAuthorizer{byUser: map[string]*rbacv1.ClusterRole{"editor": roles[0], "viewer": roles[1]}, seen: &seen}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	chain := withRequestInfo(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := &user.DefaultInfo{Name: r.Header.Get("X-Test-User")}
		withAuthorization(authz, false, ok).ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), u)))
	}))
	for _, tc := range []struct {
		user, method, sub string
		code              int
		message           string
	}{
		{"editor", "POST", "backup", 200, ""},
		{"editor", "GET", "connection", 200, ""},
		{"editor", "GET", "logs", 200, ""},
		{"viewer", "POST", "backup", 403,
			`databases.example.apiloom.dev "db1" is forbidden: User "viewer" cannot create resource "databases/backup" in API group "example.apiloom.dev" in the namespace "ns"`},
		{"viewer", "GET", "backup", 403, `cannot get resource "databases/backup"`},
		{"viewer", "GET", "connection", 200, ""},
		{"viewer", "GET", "logs", 200, ""},
		{"viewer", "POST", "logs", 403, `cannot create resource "databases/logs"`},
	} {
		seen = seen[:0]
		r := httptest.NewRequest(tc.method, dbPath+tc.sub, nil)
		r.Header.Set("X-Test-User", tc.user)
		w := httptest.NewRecorder()
		chain.ServeHTTP(w, r)
		var st metav1.Status
		if tc.code != http.StatusOK {
			if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil {
				t.Fatalf("not a Status: %s", w.Body)
			}
		}
		if w.Code != tc.code || !strings.Contains(st.Message, tc.message) {
			t.Errorf("%s %s %s: %d %s, want %d %q", tc.user, tc.method, tc.sub, w.Code, w.Body, tc.code, tc.message)
		}
		if len(seen) != 1 || seen[0].GetResource() != "databases" || seen[0].GetSubresource() != tc.sub || seen[0].GetName() != "db1" {
			t.Errorf("%s %s %s: authorizer asked %v", tc.user, tc.method, tc.sub, seen)
		}
	}
}

// TestCustomSubresourceAudit: the audit event of an action names the
// parent object and the subresource, verb create, as kube-apiserver's of
// pods/eviction; a stream's has a ResponseStarted stage, as pods/log's.
func TestCustomSubresourceAudit(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Metadata}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Audit.PolicyFile = policy
	o.Audit.LogOptions.Path = filepath.Join(dir, "audit.log")
	a, err := newAuditing(&o.Audit)
	if err != nil || a == nil {
		t.Fatalf("newAuditing: %v, %v", a, err)
	}
	if err := a.start(); err != nil {
		t.Fatal(err)
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
			return
		}
		_, _ = w.Write([]byte("line\n"))
	})
	chain := withLongRunning(streamsAt{}, a.withAuditInit(withRequestInfo(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(request.WithUser(r.Context(), &user.DefaultInfo{Name: "alice"}))
		a.withAudit(ok).ServeHTTP(w, r)
	}))))
	chain.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", dbPath+"backup", nil))
	chain.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", dbPath+"logs?follow=true", nil))
	a.shutdown(testTimeout, slog.New(slog.DiscardHandler))

	f, err := os.Open(o.Audit.LogOptions.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var complete *auditv1.Event
	var streamStages []auditv1.Stage
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var ev auditv1.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		switch {
		case ev.ObjectRef != nil && ev.ObjectRef.Subresource == "logs":
			streamStages = append(streamStages, ev.Stage)
		case ev.Stage == auditv1.StageResponseComplete:
			complete = &ev
		}
	}
	// A stream is long-running: its response is audited when it starts,
	// as a watch's or pods/log's.
	if want := []auditv1.Stage{auditv1.StageRequestReceived, auditv1.StageResponseStarted, auditv1.StageResponseComplete}; !slices.Equal(streamStages, want) {
		t.Errorf("stream audit stages %v, want %v", streamStages, want)
	}
	if complete == nil {
		t.Fatal("no ResponseComplete event")
	}
	ref := complete.ObjectRef
	if complete.Verb != "create" || ref == nil || ref.Resource != "databases" || ref.Subresource != "backup" || ref.Name != "db1" ||
		ref.Namespace != "ns" || ref.APIGroup != "example.apiloom.dev" || ref.APIVersion != "v1" ||
		complete.ResponseStatus == nil || complete.ResponseStatus.Code != http.StatusCreated {
		t.Errorf("event: verb %q, objectRef %+v, status %+v", complete.Verb, ref, complete.ResponseStatus)
	}
}

// TestCustomSubresourceMetrics: request metrics label a custom
// subresource's requests as kube-apiserver's label pods/eviction's.
func TestCustomSubresourceMetrics(t *testing.T) {
	for _, tc := range []struct{ method, path, verb, resource string }{
		{"POST", dbPath + "backup", "create", "databases/backup"},
		{"GET", dbPath + "connection", "get", "databases/connection"},
		{"GET", dbPath + "logs?follow=true", "get", "databases/logs"},
	} {
		verb, res := classify(httptest.NewRequest(tc.method, tc.path, nil))
		if verb != tc.verb || res != tc.resource {
			t.Errorf("%s %s: %s %s, want %s %s", tc.method, tc.path, verb, res, tc.verb, tc.resource)
		}
	}
}

// TestCustomStreamLongRunning: a request the resource handler calls
// long-running (a kind's own stream, as pods/log is to kube-apiserver)
// gets no deadline from the request timeout; a view and an action keep
// theirs.
func TestCustomStreamLongRunning(t *testing.T) {
	var deadline, long bool
	h := withLongRunning(streamsAt{}, withRequestInfo(withRequestTimeout(testTimeout, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, deadline = r.Context().Deadline()
		long = longRunning(r)
	}))))
	for _, tc := range []struct {
		method, path string
		long         bool
	}{
		{"GET", dbPath + "logs?follow=true", true},
		{"GET", dbPath + "logs", true},
		{"GET", dbPath + "connection", false},
		{"POST", dbPath + "backup", false},
	} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(tc.method, tc.path, nil))
		if long != tc.long || deadline == tc.long {
			t.Errorf("%s %s: long-running %v, deadline %v; want long-running %v", tc.method, tc.path, long, deadline, tc.long)
		}
	}
}
