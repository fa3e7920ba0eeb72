package authn

import (
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/group"
	x509request "k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/apiserver/pkg/authentication/user"
)

// countingVerifier is kube-apiserver's x509 authenticator, counted.
type countingVerifier struct {
	next  authenticator.Request
	calls atomic.Int64
}

func (v *countingVerifier) AuthenticateRequest(r *http.Request) (*authenticator.Response, bool, error) {
	v.calls.Add(1)
	return v.next.AuthenticateRequest(r)
}

func newCountedCache(t testing.TB, ca *testCA, now func() time.Time) (*certCache, *countingVerifier) {
	t.Helper()
	pool, err := ClientCAs(ca.pem, "")
	if err != nil {
		t.Fatal(err)
	}
	opts := x509request.DefaultVerifyOptions()
	opts.Roots = pool
	v := &countingVerifier{next: x509request.New(opts, x509request.CommonNameUserConversion)}
	return newCertCache(v, now), v
}

func TestCertCacheVerifiesEachChainOnce(t *testing.T) {
	ca := newTestCA(t, "ca")
	c, v := newCountedCache(t, ca, time.Now)
	alice := ca.request(t, "alice", []string{"dev"}, "")
	bob := ca.request(t, "bob", []string{"ops"}, "")
	for range 3 {
		for _, r := range []*http.Request{alice, bob} {
			got := authenticate(t, c, r)
			want := map[*http.Request]outcome{alice: {user: "alice", groups: []string{"dev"}}, bob: {user: "bob", groups: []string{"ops"}}}[r]
			if got.user != want.user || !slices.Equal(got.groups, want.groups) || got.err {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		}
	}
	if n := v.calls.Load(); n != 2 {
		t.Fatalf("verified %d times, want once per chain (2)", n)
	}
}

func TestCertCacheKeepsNoFailure(t *testing.T) {
	trusted, other := newTestCA(t, "ca"), newTestCA(t, "other")
	c, v := newCountedCache(t, trusted, time.Now)
	r := other.request(t, "mallory", nil, "")
	for range 3 {
		if got := authenticate(t, c, r); !got.err {
			t.Fatalf("a certificate of an untrusted CA got %+v", got)
		}
	}
	if n := v.calls.Load(); n != 3 {
		t.Fatalf("verified %d times, want every time (3)", n)
	}
	if got := authenticate(t, c, &http.Request{}); got.user != "" || got.err {
		t.Fatalf("no certificate: %+v", got)
	}
}

func TestCertCacheExpires(t *testing.T) {
	ca := newTestCA(t, "ca")
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	c, v := newCountedCache(t, ca, clock)
	r := ca.request(t, "alice", nil, "") // valid for an hour
	authenticate(t, c, r)
	advance(certCacheTTL - time.Second)
	authenticate(t, c, r)
	if n := v.calls.Load(); n != 1 {
		t.Fatalf("within the TTL: verified %d times, want 1", n)
	}
	advance(2 * time.Second)
	authenticate(t, c, r)
	if n := v.calls.Load(); n != 2 {
		t.Fatalf("after the TTL: verified %d times, want 2", n)
	}
	// A certificate's expiry comes before the TTL: nothing verified is
	// kept past its NotAfter.
	advance(time.Hour - certCacheTTL)
	authenticate(t, c, r)
	authenticate(t, c, r)
	if n := v.calls.Load(); n != 4 {
		t.Fatalf("within a minute of NotAfter: verified %d times, want 4 (nothing kept)", n)
	}
}

// spareCapacity answers for any certificate with groups whose slice has
// room to grow, which is what would let an append write into a cached one.
type spareCapacity struct{}

func (spareCapacity) AuthenticateRequest(*http.Request) (*authenticator.Response, bool, error) {
	groups := make([]string, 1, 8)
	groups[0] = "a"
	return &authenticator.Response{User: &user.DefaultInfo{Name: "alice", Groups: groups}}, true, nil
}

// TestCertCacheAnswersAreNotShared: what a caller does to its answer (the
// authenticated group adder appends to the groups) never reaches the next.
func TestCertCacheAnswersAreNotShared(t *testing.T) {
	ca := newTestCA(t, "ca")
	c := newCertCache(spareCapacity{}, time.Now)
	r := ca.request(t, "alice", nil, "")
	for range 3 {
		resp, ok, err := c.AuthenticateRequest(r)
		if !ok || err != nil {
			t.Fatalf("ok=%v err=%v", ok, err)
		}
		if got := resp.User.GetGroups(); !slices.Equal(got, []string{"a"}) {
			t.Fatalf("groups %v, want [a]", got)
		}
		info := resp.User.(*user.DefaultInfo)
		_ = append(info.Groups, "appended")
		info.Groups[0] = "changed"
	}
	a := group.NewAuthenticatedGroupAdder(c)
	for range 2 {
		if got := authenticate(t, a, r).groups; !slices.Equal(got, []string{"a", user.AllAuthenticated}) {
			t.Fatalf("through the group adder: %v", got)
		}
	}
}

// BenchmarkClientCert is one request's client-certificate authentication,
// verified every time (as kube-apiserver) and through the cache.
func BenchmarkClientCert(b *testing.B) {
	ca := newTestCA(b, "ca")
	r := ca.request(b, "alice", []string{"dev"}, "")
	c, v := newCountedCache(b, ca, time.Now)
	for _, bc := range []struct {
		name string
		a    authenticator.Request
	}{{"verify", v}, {"cached", c}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, ok, err := bc.a.AuthenticateRequest(r); !ok || err != nil {
					b.Fatal(ok, err)
				}
			}
		})
	}
}
