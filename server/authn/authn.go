package authn

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/anonymous"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/request/union"
	x509request "k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/apiserver/pkg/authentication/token/tokenfile"
	tokenunion "k8s.io/apiserver/pkg/authentication/token/union"
	"k8s.io/apiserver/pkg/authentication/user"
)

// The server's own identity: the loopback client (its controllers, and the
// admin token tests use) is this user, in system:masters, which the
// authorizers allow everything, as kube-apiserver's loopback client.
const (
	LoopbackUser = user.APIServerUser // "system:apiserver"
)

// ErrNoClientCA is returned by ClientCAs when neither the server's CA nor
// a --client-ca-file gave a certificate to trust.
var ErrNoClientCA = errors.New("authn: no client CA certificate")

// Config says which credentials the server accepts.
type Config struct {
	// ClientCAs verify client certificates (CN is the user, O its
	// groups); nil accepts none.
	ClientCAs *x509.CertPool
	// TokenAuthFile is kube-apiserver's --token-auth-file, a CSV of
	// token,user,uid[,"group1,group2"]; "" accepts no such token.
	TokenAuthFile string
	// LoopbackToken authenticates as LoopbackUser in system:masters;
	// "" accepts none.
	LoopbackToken string
	// Tokens are the other bearer-token authenticators (ServiceAccount
	// tokens, JWT issuers, a webhook), asked in this order after the token
	// file, as in kube-apiserver's chain.
	Tokens []authenticator.Token
	// APIAudiences are the server's own audiences (kube-apiserver's
	// --api-audiences): the token file and loopback tokens, which name no
	// audience, are good for these only when a caller (TokenReview's
	// spec.audiences) asks for particular ones, as upstream.
	APIAudiences authenticator.Audiences
	// Anonymous identifies requests that carry no credentials as
	// system:anonymous in system:unauthenticated instead of refusing them.
	// A request whose credentials are bad is refused all the same.
	Anonymous bool
}

// New builds the authenticator for c. The answer is (nil, false, nil) for a
// request with no credentials (when anonymous is off), an error for bad
// ones; both are a 401 for the caller. Every user it identifies, other than
// the anonymous one, is in system:authenticated.
func New(c Config) (authenticator.Request, error) {
	var chain []authenticator.Request
	if c.ClientCAs != nil {
		opts := x509request.DefaultVerifyOptions() // client-auth key usage, as upstream
		opts.Roots = c.ClientCAs
		chain = append(chain, newCertCache(x509request.New(opts, x509request.CommonNameUserConversion), time.Now))
	}
	var tokens []authenticator.Token
	if c.LoopbackToken != "" {
		tokens = append(tokens, authenticator.WrapAudienceAgnosticToken(c.APIAudiences, tokenfile.New(map[string]*user.DefaultInfo{
			c.LoopbackToken: {Name: LoopbackUser, Groups: []string{user.SystemPrivilegedGroup}},
		})))
	}
	if c.TokenAuthFile != "" {
		f, err := tokenfile.NewCSV(c.TokenAuthFile)
		if err != nil {
			return nil, fmt.Errorf("authn: --token-auth-file: %w", err)
		}
		tokens = append(tokens, authenticator.WrapAudienceAgnosticToken(c.APIAudiences, f))
	}
	tokens = append(tokens, c.Tokens...)
	if len(tokens) > 0 {
		chain = append(chain, bearertoken.New(tokenunion.New(tokens...)))
	}
	var a authenticator.Request = group.NewAuthenticatedGroupAdder(union.New(chain...))
	if len(chain) == 0 {
		a = nil
	}
	if c.Anonymous {
		anon := anonymous.NewAuthenticator(nil)
		if a == nil {
			return anon, nil
		}
		// As kube-apiserver: a bad credential is refused, not downgraded
		// to anonymous; only a request with none is anonymous.
		return union.NewFailOnError(a, anon), nil
	}
	if a == nil {
		return nobody{}, nil
	}
	return a, nil
}

// nobody is the authenticator with no credential to accept.
type nobody struct{}

func (nobody) AuthenticateRequest(*http.Request) (*authenticator.Response, bool, error) {
	return nil, false, nil
}

// ClientCAs is the pool client certificates are verified against: the
// server's own CA (PEM, may be nil) and every CA in file ("" for none),
// kube-apiserver's --client-ca-file.
func ClientCAs(serverCAPEM []byte, file string) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	n := 0
	if len(serverCAPEM) > 0 {
		if !pool.AppendCertsFromPEM(serverCAPEM) {
			return nil, errors.New("authn: the server's CA does not parse")
		}
		n++
	}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("authn: --client-ca-file: %w", err)
		}
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("authn: --client-ca-file %s holds no PEM certificate", file)
		}
		n++
	}
	if n == 0 {
		return nil, ErrNoClientCA
	}
	return pool, nil
}
