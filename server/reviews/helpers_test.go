package reviews

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// fakeAuthorizer answers every question with its decision, reason and
// error, and records the attributes it was asked about.
type fakeAuthorizer struct {
	decision authorizer.Decision
	reason   string
	err      error

	mu    sync.Mutex // guards asked
	asked []authorizer.Attributes
}

func (f *fakeAuthorizer) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, a)
	return f.decision, f.reason, f.err
}

func (f *fakeAuthorizer) lastAsked(t *testing.T) authorizer.Attributes {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.asked) == 0 {
		t.Fatal("the authorizer was not asked")
	}
	return f.asked[len(f.asked)-1]
}

// fakeResolver answers RulesFor with fixed rules, and records whom and
// where it was asked.
type fakeResolver struct {
	res        []authorizer.ResourceRuleInfo
	nonRes     []authorizer.NonResourceRuleInfo
	incomplete bool
	err        error

	mu        sync.Mutex // guards user, namespace
	user      user.Info
	namespace string
}

func (f *fakeResolver) RulesFor(_ context.Context, u user.Info, namespace string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.user, f.namespace = u, namespace
	return f.res, f.nonRes, f.incomplete, f.err
}

var (
	alice   = &user.DefaultInfo{Name: "alice", UID: "a-1", Groups: []string{"dev", user.AllAuthenticated}, Extra: map[string][]string{"scopes": {"x", "y"}}}
	fixedAt = time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)
	errBoom = errors.New("rbac: cache not synced")
)

// reviewServer serves the reviews over HTTP; each request carries u as
// its user unless u is nil.
func reviewServer(t *testing.T, a authorizer.UnconditionalAuthorizer, r authorizer.RuleResolver, u user.Info) *httptest.Server {
	t.Helper()
	h, err := newHandler(Config{Authorizer: a, RuleResolver: r, MaxRequestBodyBytes: 1 << 16}, func() time.Time { return fixedAt })
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Install(mux)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if u != nil {
			req = req.WithContext(request.WithUser(req.Context(), u))
		}
		mux.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// post sends body to path and returns the status code, the body and the
// response headers.
func post(t *testing.T, srv *httptest.Server, path, contentType, body string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(data), resp.Header
}
