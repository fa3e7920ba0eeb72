// Package jwt is kube-apiserver's JWT (OIDC) token authentication: the
// structured authentication configuration (--authentication-config, with
// several issuers, claim mappings and CEL rules, reloaded while serving)
// and the classic --oidc-* flags, both answered by k8s.io/apiserver's own
// JWT authenticator (plugin/pkg/authenticator/token/oidc).
package jwt

import (
	"errors"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/apis/apiserver/install"
	"k8s.io/apiserver/pkg/apis/apiserver/validation"
	authenticationcel "k8s.io/apiserver/pkg/authentication/cel"
	"k8s.io/utils/ptr"
)

// codecs decode every served version of AuthenticationConfiguration
// (apiserver.config.k8s.io v1, v1beta1, v1alpha1) into the internal type
// the validation and the authenticator read; strict, as kube-apiserver's.
var codecs = func() serializer.CodecFactory {
	s := runtime.NewScheme()
	install.Install(s)
	return serializer.NewCodecFactory(s, serializer.EnableStrict)
}()

// Load reads and decodes an AuthenticationConfiguration file; it also
// returns the bytes read, which a reload compares against.
func Load(path string) (*apiserver.AuthenticationConfiguration, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	c, err := Decode(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, data, nil
}

// Decode is Load for bytes already read.
func Decode(data []byte) (*apiserver.AuthenticationConfiguration, error) {
	if len(data) == 0 {
		return nil, errors.New("empty config data")
	}
	obj, err := runtime.Decode(codecs.UniversalDecoder(), data)
	if err != nil {
		return nil, err
	}
	c, ok := obj.(*apiserver.AuthenticationConfiguration)
	if !ok || c == nil {
		return nil, fmt.Errorf("expected AuthenticationConfiguration, got %T", obj)
	}
	return c, nil
}

// Validate is kube-apiserver's validation of the configuration, CEL
// expressions compiled: disallowedIssuers are the ServiceAccount token
// issuers, which no JWT authenticator may claim.
func Validate(c *apiserver.AuthenticationConfiguration, disallowedIssuers []string) error {
	return validation.ValidateAuthenticationConfiguration(authenticationcel.NewDefaultCompiler(), c, disallowedIssuers).ToAggregate()
}

// Flags are kube-apiserver's classic --oidc-* flags: one issuer.
type Flags struct {
	IssuerURL      string
	ClientID       string
	CAFile         string
	UsernameClaim  string
	UsernamePrefix string
	GroupsClaim    string
	GroupsPrefix   string
	SigningAlgs    []string
	RequiredClaims map[string]string
}

// FromFlags is the configuration the --oidc-* flags stand for, as
// kube-apiserver builds it: a username claim other than email is
// prefixed with "<issuer>#" unless a prefix is given, and "-" means none.
func FromFlags(f Flags) (*apiserver.AuthenticationConfiguration, error) {
	prefix := f.UsernamePrefix
	if prefix == "" && f.UsernameClaim != "email" {
		prefix = f.IssuerURL + "#"
	}
	if f.UsernamePrefix == "-" {
		prefix = ""
	}
	a := apiserver.JWTAuthenticator{
		Issuer: apiserver.Issuer{URL: f.IssuerURL, Audiences: []string{f.ClientID}},
		ClaimMappings: apiserver.ClaimMappings{
			Username: apiserver.PrefixedClaimOrExpression{Prefix: ptr.To(prefix), Claim: f.UsernameClaim},
		},
	}
	if f.GroupsClaim != "" {
		a.ClaimMappings.Groups = apiserver.PrefixedClaimOrExpression{Prefix: ptr.To(f.GroupsPrefix), Claim: f.GroupsClaim}
	}
	if f.CAFile != "" {
		b, err := os.ReadFile(f.CAFile)
		if err != nil {
			return nil, fmt.Errorf("--oidc-ca-file: %w", err)
		}
		a.Issuer.CertificateAuthority = string(b)
	}
	for claim, value := range f.RequiredClaims {
		a.ClaimValidationRules = append(a.ClaimValidationRules, apiserver.ClaimValidationRule{Claim: claim, RequiredValue: value})
	}
	return &apiserver.AuthenticationConfiguration{JWT: []apiserver.JWTAuthenticator{a}}, nil
}
