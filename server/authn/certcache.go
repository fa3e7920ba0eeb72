package authn

import (
	"crypto/sha256"
	"net/http"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
)

// Verifying a client certificate's chain costs an ECDSA signature check
// per certificate (a sixth of the server's CPU on creates, by profile),
// and kube-apiserver's x509 authenticator does it
// on every request: its connection-level cache was proposed
// (kubernetes#100902) and never merged. The chain, the trusted roots and
// the clock are all the answer depends on; the roots are fixed when the
// server starts, so a successful answer is kept for the chain's bytes until
// the first certificate in it expires or certCacheTTL passes, whichever is
// first (the cap bounds how late a root's own expiry is noticed).
const (
	certCacheSize = 4096
	certCacheTTL  = time.Minute
)

// certCache remembers which user a verified client certificate chain is.
// Failures are not kept: a bad certificate costs a verification each time,
// as upstream, and cannot fill the cache.
type certCache struct {
	verify authenticator.Request
	now    func() time.Time
	seen   *cache.LRUExpireCache
}

func newCertCache(verify authenticator.Request, now func() time.Time) *certCache {
	return &certCache{verify: verify, now: now, seen: cache.NewLRUExpireCacheWithClock(certCacheSize, clockFunc(now))}
}

// clockFunc adapts now to the LRU cache's clock.
type clockFunc func() time.Time

func (f clockFunc) Now() time.Time { return f() }

func (c *certCache) AuthenticateRequest(r *http.Request) (*authenticator.Response, bool, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return c.verify.AuthenticateRequest(r)
	}
	certs := r.TLS.PeerCertificates
	h := sha256.New()
	for _, cert := range certs {
		// DER carries each certificate's length, so the concatenation
		// names one chain.
		h.Write(cert.Raw)
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	if v, ok := c.seen.Get(key); ok {
		return copyResponse(v.(*authenticator.Response)), true, nil
	}
	resp, ok, err := c.verify.AuthenticateRequest(r)
	if !ok || err != nil {
		return resp, ok, err
	}
	ttl := certCacheTTL
	now := c.now()
	for _, cert := range certs {
		ttl = min(ttl, cert.NotAfter.Sub(now))
	}
	if ttl > 0 {
		c.seen.Add(key, copyResponse(resp), ttl)
	}
	return resp, ok, err
}

// copyResponse is a response no caller shares: authenticators further on
// append to the groups (group.AuthenticatedGroupAdder), which must never
// write into a cached slice.
func copyResponse(r *authenticator.Response) *authenticator.Response {
	out := &authenticator.Response{Audiences: slices.Clip(slices.Clone(r.Audiences))}
	if r.User != nil {
		var extra map[string][]string
		if e := r.User.GetExtra(); e != nil {
			extra = make(map[string][]string, len(e))
			for k, v := range e {
				extra[k] = slices.Clip(slices.Clone(v))
			}
		}
		out.User = &user.DefaultInfo{
			Name:   r.User.GetName(),
			UID:    r.User.GetUID(),
			Groups: slices.Clip(slices.Clone(r.User.GetGroups())),
			Extra:  extra,
		}
	}
	return out
}
