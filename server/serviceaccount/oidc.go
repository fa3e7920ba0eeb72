package serviceaccount

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
)

// Discovery paths, as kube-apiserver serves them.
const (
	OpenIDConfigPath = "/.well-known/openid-configuration"
	JWKSPath         = "/openid/v1/jwks"
)

// openIDConfig is the discovery document upstream serves
// (pkg/serviceaccount/openidmetadata.go).
type openIDConfig struct {
	Issuer        string   `json:"issuer"`
	JWKSURI       string   `json:"jwks_uri"`
	ResponseTypes []string `json:"response_types_supported"`
	SubjectTypes  []string `json:"subject_types_supported"`
	SigningAlgs   []string `json:"id_token_signing_alg_values_supported"`
}

// Discovery is the issuer's OpenID discovery document and JWKS, rendered
// once: both only change with the server's flags.
type Discovery struct {
	config, jwks []byte
}

// NewDiscovery renders the documents of issuer. jwksURI is
// --service-account-jwks-uri; "" is the issuer's own /openid/v1/jwks.
func NewDiscovery(issuer, jwksURI string, keys *Keys) (*Discovery, error) {
	if jwksURI == "" {
		u, err := url.Parse(issuer)
		if err != nil {
			return nil, err
		}
		u.Path, u.RawQuery, u.Fragment = JWKSPath, "", ""
		jwksURI = u.String()
	}
	config, err := json.Marshal(openIDConfig{
		Issuer:        issuer,
		JWKSURI:       jwksURI,
		ResponseTypes: []string{"id_token"},
		SubjectTypes:  []string{"public"},
		SigningAlgs:   keys.algorithms(),
	})
	if err != nil {
		return nil, err
	}
	jwks, err := json.Marshal(keys.JWKS())
	if err != nil {
		return nil, err
	}
	return &Discovery{config: config, jwks: jwks}, nil
}

// ConfigHandler serves the discovery document.
func (d *Discovery) ConfigHandler() http.Handler { return serve(d.config, "application/json") }

// JWKSHandler serves the key set.
func (d *Discovery) JWKSHandler() http.Handler { return serve(d.jwks, "application/jwk-set+json") }

// serve answers body with upstream's caching: an hour, public.
func serve(body []byte, contentType string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	})
}
