package serviceaccount

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	apiserverserviceaccount "k8s.io/apiserver/pkg/authentication/serviceaccount"
	tokenjwt "k8s.io/apiserver/pkg/authentication/token/jwt"
)

// Objects reads the objects a token names from the server's own storage,
// so a token stops working as soon as its ServiceAccount (or bound
// Secret) is gone or replaced. A missing object is a NotFound error.
type Objects interface {
	ServiceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error)
	Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
}

// signingAlgorithms are the algorithms a token may be signed with: those
// of the keys upstream accepts.
var signingAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.ES384, jose.ES512}

// Authenticator is the ServiceAccount token authenticator, upstream's
// JWTTokenAuthenticator with its validator: a token of one of the issuers,
// signed by one of the keys, for an audience the request accepts, not
// expired, whose ServiceAccount and bound object still exist with the
// UIDs it names.
type Authenticator struct {
	issuers map[string]bool
	keys    []jose.JSONWebKey
	// implicit are the server's API audiences, asked for when the request
	// carries none and assumed for a token that names none.
	implicit authenticator.Audiences
	objects  atomic.Pointer[Objects]
	now      func() time.Time
}

var _ authenticator.Token = (*Authenticator)(nil)

// NewAuthenticator accepts tokens of issuers signed by keys' verification
// keys, for audiences. It answers "not mine" until SetObjects.
func NewAuthenticator(issuers []string, keys *Keys, audiences []string) *Authenticator {
	a := &Authenticator{issuers: map[string]bool{}, keys: keys.verifiers, implicit: audiences, now: time.Now}
	for _, i := range issuers {
		a.issuers[i] = true
	}
	return a
}

// SetObjects gives the authenticator its reader once storage exists.
func (a *Authenticator) SetObjects(o Objects) { a.objects.Store(&o) }

// AuthenticateToken answers (nil, false, nil) for a token that is not a
// JWT of these issuers (another authenticator's), and an error for one
// that is but does not hold.
func (a *Authenticator) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	objs := a.objects.Load()
	if objs == nil || strings.Count(token, ".") != 2 {
		return nil, false, nil
	}
	tok, err := jwt.ParseSigned(token, signingAlgorithms)
	if err != nil {
		return nil, false, nil
	}
	// The issuer is read unverified first, as upstream does, to tell our
	// tokens from another issuer's without trying every key on them.
	var unverified jwt.Claims
	if err := tok.UnsafeClaimsWithoutVerification(&unverified); err != nil || !a.issuers[unverified.Issuer] {
		return nil, false, nil
	}
	var public jwt.Claims
	var private privateClaims
	if !a.verify(tok, &public, &private) {
		return nil, false, errors.New("token signature is invalid")
	}
	auds := authenticator.Audiences(public.Audience)
	if len(auds) == 0 {
		auds = a.implicit
	}
	requested, ok := authenticator.AudiencesFrom(ctx)
	if !ok {
		requested = a.implicit
	}
	matched := auds.Intersect(requested)
	if len(matched) == 0 && len(a.implicit) != 0 {
		return nil, false, fmt.Errorf("token audiences %q is invalid for the target audiences %q", auds, requested)
	}
	info, err := a.validate(ctx, *objs, &public, &private)
	if err != nil {
		return nil, false, err
	}
	return &authenticator.Response{Audiences: matched, User: info.UserInfo()}, true, nil
}

// verify checks tok's signature with the key its kid names, or with each
// key when none matches, as upstream tries every key.
func (a *Authenticator) verify(tok *jwt.JSONWebToken, out ...any) bool {
	kid := ""
	if len(tok.Headers) > 0 {
		kid = tok.Headers[0].KeyID
	}
	for _, k := range a.keys {
		if kid != "" && k.KeyID == kid && tok.Claims(k.Key, out...) == nil {
			return true
		}
	}
	for _, k := range a.keys {
		if k.KeyID != kid && tok.Claims(k.Key, out...) == nil {
			return true
		}
	}
	return false
}

// validate is upstream's validator: the times (with go-jose's default
// minute of leeway), then the objects the private claims name.
func (a *Authenticator) validate(ctx context.Context, objs Objects, public *jwt.Claims, private *privateClaims) (*apiserverserviceaccount.ServiceAccountInfo, error) {
	now := a.now()
	switch err := public.Validate(jwt.Expected{Time: now}); {
	case err == nil:
	case errors.Is(err, jwt.ErrExpired):
		return nil, errors.New("service account token has expired")
	case errors.Is(err, jwt.ErrNotValidYet):
		return nil, errors.New("service account token is not valid yet")
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return nil, errors.New("service account token is issued in the future")
	default:
		return nil, errors.New("service account token claims could not be validated due to unexpected validation error")
	}
	k := &private.Kubernetes
	if k.Namespace == "" || k.Svcacct.Name == "" || k.Svcacct.UID == "" {
		return nil, errors.New("service account token is missing its kubernetes.io claims")
	}
	if k.Pod != nil || k.Node != nil {
		// Neither kind is served here, so nothing can vouch the object
		// still exists: refuse rather than trust it.
		return nil, errors.New("service account token is bound to an object this server does not serve")
	}
	// An object deleted a minute ago or more invalidates the token; one
	// being deleted just now is still honoured, as upstream's leeway.
	deletedBefore := now.Add(-jwt.DefaultLeeway)
	sa, err := objs.ServiceAccount(ctx, k.Namespace, k.Svcacct.Name)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, errors.New("service account token has been invalidated")
		}
		return nil, err
	}
	if string(sa.UID) != k.Svcacct.UID {
		return nil, fmt.Errorf("service account UID (%s) does not match claim (%s)", sa.UID, k.Svcacct.UID)
	}
	if sa.DeletionTimestamp != nil && sa.DeletionTimestamp.Time.Before(deletedBefore) {
		return nil, fmt.Errorf("service account %s/%s has been deleted", k.Namespace, k.Svcacct.Name)
	}
	if k.Secret != nil {
		s, err := objs.Secret(ctx, k.Namespace, k.Secret.Name)
		if err != nil {
			if apierrors.IsNotFound(err) {
				return nil, errors.New("service account token has been invalidated")
			}
			return nil, err
		}
		if string(s.UID) != k.Secret.UID {
			return nil, fmt.Errorf("secret UID (%s) does not match service account secret ref claim (%s)", s.UID, k.Secret.UID)
		}
		if s.DeletionTimestamp != nil && s.DeletionTimestamp.Time.Before(deletedBefore) {
			return nil, errors.New("service account token has been invalidated")
		}
	}
	return &apiserverserviceaccount.ServiceAccountInfo{
		Namespace:    k.Namespace,
		Name:         k.Svcacct.Name,
		UID:          k.Svcacct.UID,
		CredentialID: tokenjwt.CredentialIDForJTI(public.ID),
	}, nil
}
