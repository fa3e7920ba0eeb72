package apiserver

import (
	"context"
	"crypto"
	"net/http"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/server/controllers"
	sacontrollers "github.com/apiloom/apiloom/server/controllers/serviceaccount"
	"github.com/apiloom/apiloom/server/endpoints/storageerr"
	"github.com/apiloom/apiloom/server/registry"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/serviceaccount"
	"github.com/apiloom/apiloom/server/storage"
)

// serviceAccounts is the server's ServiceAccount token machinery: the
// keys, the issuer, the authenticator in the chain and the discovery
// documents. It is made with the authenticators, before storage exists;
// attach gives it the ServiceAccounts and Secrets once it does.
type serviceAccounts struct {
	opts      *Options
	issuer    *serviceaccount.Issuer
	authn     *serviceaccount.Authenticator
	discovery *serviceaccount.Discovery
	tokens    *serviceaccount.TokenRequest
}

// newServiceAccounts loads the signing key (generating DataDir/pki/sa.key
// when no --service-account-signing-key-file is given) and the
// verification keys.
func newServiceAccounts(o *Options) (*serviceAccounts, error) {
	var signer crypto.Signer
	var err error
	if o.ServiceAccounts.SigningKeyFile != "" {
		signer, err = serviceaccount.LoadSigningKey(o.ServiceAccounts.SigningKeyFile)
	} else {
		signer, err = serviceaccount.LoadOrCreateSigningKey(o.path("pki", "sa.key"))
	}
	if err != nil {
		return nil, err
	}
	var public []crypto.PublicKey
	for _, f := range o.ServiceAccounts.KeyFiles {
		keys, err := serviceaccount.LoadPublicKeys(f)
		if err != nil {
			return nil, err
		}
		public = append(public, keys...)
	}
	keys, err := serviceaccount.NewKeys(signer, public)
	if err != nil {
		return nil, err
	}
	issuers := o.serviceAccountIssuers()
	issuer, err := serviceaccount.NewIssuer(issuers[0], keys)
	if err != nil {
		return nil, err
	}
	disc, err := serviceaccount.NewDiscovery(issuers[0], o.ServiceAccounts.JWKSURI, keys)
	if err != nil {
		return nil, err
	}
	return &serviceAccounts{
		opts:      o,
		issuer:    issuer,
		authn:     serviceaccount.NewAuthenticator(issuers, keys, o.apiAudiences()),
		discovery: disc,
	}, nil
}

// attach reads ServiceAccounts and Secrets from served's storage from now
// on: the authenticator from the watch caches (as upstream's reads its
// informers), the token requests consistently. It does nothing when
// either kind is not served (--builtin-apis): no token can be asked for,
// and the authenticator keeps answering "not mine".
func (sa *serviceAccounts) attach(served *registry.Served) {
	if sa == nil {
		return
	}
	sas, ok1 := registry.Storage[*corev1.ServiceAccount](served)
	secrets, ok2 := registry.Storage[*corev1.Secret](served)
	if !ok1 || !ok2 {
		return
	}
	sa.authn.SetObjects(storedObjects{sas: sas, secrets: secrets, rv: "0"})
	sa.tokens = &serviceaccount.TokenRequest{
		Issuer: sa.issuer, Objects: storedObjects{sas: sas, secrets: secrets},
		Audiences: sa.opts.apiAudiences(), MaxExpiration: sa.opts.ServiceAccounts.MaxExpiration,
		MaxBodyBytes: sa.opts.MaxRequestBodyBytes,
	}
}

// install serves the token subresource (when attached) and the issuer's
// discovery documents on mux.
func (sa *serviceAccounts) install(mux *http.ServeMux) {
	if sa == nil {
		return
	}
	mux.Handle("GET "+serviceaccount.OpenIDConfigPath, sa.discovery.ConfigHandler())
	mux.Handle("GET "+serviceaccount.JWKSPath, sa.discovery.JWKSHandler())
	if sa.tokens != nil {
		mux.Handle("/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token", sa.tokens)
	}
}

// tokenSubresource is serviceaccounts/token as discovery lists it.
var tokenSubresource = resource.SubresourceInfo{
	Name:  "token",
	Kind:  metav1.GroupVersionKind{Group: authenticationv1.GroupName, Version: "v1", Kind: "TokenRequest"},
	Verbs: []string{"create"},
}

// withSubresources returns infos with the token subresource on core/v1
// serviceaccounts when it is served; the ServiceAccount's Info is copied,
// never changed, as the definitions are shared by every server.
func (sa *serviceAccounts) withSubresources(infos []*resource.Info) []*resource.Info {
	if sa == nil || sa.tokens == nil {
		return infos
	}
	out := make([]*resource.Info, len(infos))
	for i, info := range infos {
		out[i] = info
		if info.Group == "" && info.Version == "v1" && info.Plural == "serviceaccounts" {
			c := *info
			c.Subresources = append(append([]resource.SubresourceInfo(nil), info.Subresources...), tokenSubresource)
			out[i] = &c
		}
	}
	return out
}

// storedObjects reads ServiceAccounts and Secrets from the server's
// storage; rv "0" reads the watch cache's current state, "" consistently.
type storedObjects struct {
	sas     storage.Interface[*corev1.ServiceAccount]
	secrets storage.Interface[*corev1.Secret]
	rv      string
}

func (s storedObjects) ServiceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error) {
	sa, err := s.sas.Get(ctx, storage.Key(namespace, name), storage.GetOptions{ResourceVersion: s.rv})
	if err != nil {
		return nil, storageerr.Status(err, schema.GroupResource{Resource: "serviceaccounts"}, name, storageerr.Other)
	}
	return sa, nil
}

func (s storedObjects) Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	secret, err := s.secrets.Get(ctx, storage.Key(namespace, name), storage.GetOptions{ResourceVersion: s.rv})
	if err != nil {
		return nil, storageerr.Status(err, schema.GroupResource{Resource: "secrets"}, name, storageerr.Other)
	}
	return secret, nil
}

// serviceAccountControllers are the loops that give every namespace its
// default ServiceAccount and its kube-root-ca.crt ConfigMap, where the
// kinds they write are served. The CA published is the one that signed
// the serving certificate (DataDir/pki/ca.crt, or the operator's);
// without one known, as with a --tls-cert-file of another CA, nothing is
// published, rather than a CA that does not verify the server.
func (s *Server) serviceAccountControllers() []controllers.Controller {
	var list []controllers.Controller
	if !s.registry.ServesNamespaces() {
		return nil
	}
	infos := s.registry.Infos()
	if controllerEnabled(s.opts.Controllers, controllerServiceAccount) && servesCore(infos, "serviceaccounts") {
		list = append(list, sacontrollers.NewServiceAccounts())
	}
	if controllerEnabled(s.opts.Controllers, controllerRootCAPublisher) && servesCore(infos, "configmaps") && len(s.caPEM) > 0 {
		list = append(list, sacontrollers.NewRootCAPublisher(s.caPEM))
	}
	return list
}

// servesCore reports whether core/v1 plural is among infos.
func servesCore(infos []*resource.Info, plural string) bool {
	for _, i := range infos {
		if i.Group == "" && i.Version == "v1" && i.Plural == plural {
			return true
		}
	}
	return false
}
