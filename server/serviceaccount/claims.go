package serviceaccount

import (
	"fmt"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apiserverserviceaccount "k8s.io/apiserver/pkg/authentication/serviceaccount"
)

// privateClaims are upstream's kubernetes.io claims (pkg/serviceaccount
// claims.go), of which apiloom writes the ServiceAccount's and a bound
// Secret's: it serves no Pods or Nodes to bind to.
type privateClaims struct {
	Kubernetes kubernetesClaims `json:"kubernetes.io,omitempty"`
}

type kubernetesClaims struct {
	Namespace string           `json:"namespace,omitempty"`
	Svcacct   ref              `json:"serviceaccount,omitempty"`
	Pod       *ref             `json:"pod,omitempty"`
	Secret    *ref             `json:"secret,omitempty"`
	Node      *ref             `json:"node,omitempty"`
	WarnAfter *jwt.NumericDate `json:"warnafter,omitempty"`
}

type ref struct {
	Name string `json:"name,omitempty"`
	UID  string `json:"uid,omitempty"`
}

// Issuer signs ServiceAccount tokens.
type Issuer struct {
	iss    string
	signer jose.Signer
	now    func() time.Time
}

// NewIssuer returns the issuer iss signing with keys' signing key.
func NewIssuer(iss string, keys *Keys) (*Issuer, error) {
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: keys.alg, Key: keys.signer},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", keys.keyID))
	if err != nil {
		return nil, err
	}
	return &Issuer{iss: iss, signer: s, now: time.Now}, nil
}

// Token is the signed token of sa for audiences, valid for expiration
// from now, bound to secret when it is not nil, with its expiry.
func (i *Issuer) Token(sa *corev1.ServiceAccount, secret *corev1.Secret, audiences []string, expiration time.Duration) (string, time.Time, error) {
	now := i.now()
	exp := now.Add(expiration)
	std := jwt.Claims{
		Issuer:    i.iss,
		Subject:   apiserverserviceaccount.MakeUsername(sa.Namespace, sa.Name),
		Audience:  jwt.Audience(audiences),
		IssuedAt:  jwt.NewNumericDate(now),
		NotBefore: jwt.NewNumericDate(now),
		Expiry:    jwt.NewNumericDate(exp),
		ID:        uuid.NewString(),
	}
	pc := privateClaims{Kubernetes: kubernetesClaims{
		Namespace: sa.Namespace,
		Svcacct:   ref{Name: sa.Name, UID: string(sa.UID)},
	}}
	if secret != nil {
		pc.Kubernetes.Secret = &ref{Name: secret.Name, UID: string(secret.UID)}
	}
	tok, err := jwt.Signed(i.signer).Claims(std).Claims(pc).Serialize()
	if err != nil {
		return "", time.Time{}, fmt.Errorf("serviceaccount: sign: %w", err)
	}
	return tok, exp.Truncate(time.Second), nil
}
