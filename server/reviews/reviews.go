package reviews

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/apiloom/apiloom/server/resource"
)

// DefaultMaxRequestBodyBytes is kube-apiserver's --max-resource-write-bytes
// default, the largest review body read when Config leaves it zero.
const DefaultMaxRequestBodyBytes = 3 << 20

// Config is what the reviews ask and how much they read.
type Config struct {
	// Authorizer answers the access reviews; required. Any
	// authorizer.Authorizer is one; the reviews ask only for unconditional
	// decisions, as kube-apiserver's do.
	Authorizer authorizer.UnconditionalAuthorizer
	// RuleResolver answers SelfSubjectRulesReview; required.
	RuleResolver authorizer.RuleResolver
	// Authenticator answers TokenReview: the server's request
	// authenticator, which it asks about a request bearing the token.
	// Nil answers every TokenReview unauthenticated.
	Authenticator authenticator.Request
	// APIAudiences are the audiences a TokenReview without
	// spec.audiences asks for (--api-audiences).
	APIAudiences []string
	// MaxRequestBodyBytes caps a review's body (413 beyond it); zero means
	// DefaultMaxRequestBodyBytes.
	MaxRequestBodyBytes int64
}

// Handler serves the six review kinds. It holds no state beyond its
// Config, so it is safe for concurrent use.
type Handler struct {
	authz     authorizer.UnconditionalAuthorizer
	rules     authorizer.RuleResolver
	authn     authenticator.Request
	audiences []string
	max       int64
	now       func() time.Time
	codecs    serializer.CodecFactory
}

// New returns the reviews' handler; it fails when cfg lacks the authorizer
// or the rule resolver.
func New(cfg Config) (*Handler, error) {
	return newHandler(cfg, time.Now)
}

// newHandler is New with the clock SelfSubjectReview's creationTimestamp
// reads, so tests can fix it.
func newHandler(cfg Config, now func() time.Time) (*Handler, error) {
	if cfg.Authorizer == nil || cfg.RuleResolver == nil {
		return nil, ErrNoAuthorizer
	}
	if cfg.MaxRequestBodyBytes <= 0 {
		cfg.MaxRequestBodyBytes = DefaultMaxRequestBodyBytes
	}
	return &Handler{authz: cfg.Authorizer, rules: cfg.RuleResolver, authn: cfg.Authenticator, audiences: cfg.APIAudiences,
		max: cfg.MaxRequestBodyBytes, now: now,
		codecs: serializer.NewCodecFactory(scheme, serializer.EnableStrict)}, nil
}

// scheme knows the review kinds and the meta types their responses and
// errors carry.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{authorizationv1.AddToScheme, authenticationv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(fmt.Sprintf("reviews: scheme: %v", err))
		}
	}
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s
}()

// kind describes one review kind: its discovery Info and how a create of
// it is answered.
type kind struct {
	info   resource.Info
	new    func() runtime.Object
	create func(h *Handler, r *http.Request, obj runtime.Object) (runtime.Object, error)
}

var (
	authzGV = authorizationv1.SchemeGroupVersion
	authnGV = authenticationv1.SchemeGroupVersion
)

// reviewInfo is the discovery description of a review kind.
// openAPIName is the key openapi-gen gives the kind's definition, its
// model name ("io.k8s.api.authorization.v1.SubjectAccessReview").
func reviewInfo(gv schema.GroupVersion, kind, plural string, namespaced bool, openAPIName string) resource.Info {
	return resource.Info{
		Group: gv.Group, Version: gv.Version, Kind: kind, Plural: plural,
		Singular: strings.ToLower(kind), Namespaced: namespaced, CreateOnly: true,
		OpenAPIName: openAPIName,
	}
}

// kinds are the served reviews (discovery sorts them by plural).
var kinds = []*kind{
	{
		info: reviewInfo(authzGV, "SelfSubjectAccessReview", "selfsubjectaccessreviews", false, authorizationv1.SelfSubjectAccessReview{}.OpenAPIModelName()),
		new:  func() runtime.Object { return &authorizationv1.SelfSubjectAccessReview{} },
		create: func(h *Handler, r *http.Request, obj runtime.Object) (runtime.Object, error) {
			return h.selfSubjectAccessReview(r, obj.(*authorizationv1.SelfSubjectAccessReview))
		},
	},
	{
		info: reviewInfo(authzGV, "SubjectAccessReview", "subjectaccessreviews", false, authorizationv1.SubjectAccessReview{}.OpenAPIModelName()),
		new:  func() runtime.Object { return &authorizationv1.SubjectAccessReview{} },
		create: func(h *Handler, r *http.Request, obj runtime.Object) (runtime.Object, error) {
			return h.subjectAccessReview(r, obj.(*authorizationv1.SubjectAccessReview))
		},
	},
	{
		info: reviewInfo(authzGV, "LocalSubjectAccessReview", "localsubjectaccessreviews", true, authorizationv1.LocalSubjectAccessReview{}.OpenAPIModelName()),
		new:  func() runtime.Object { return &authorizationv1.LocalSubjectAccessReview{} },
		create: func(h *Handler, r *http.Request, obj runtime.Object) (runtime.Object, error) {
			return h.localSubjectAccessReview(r, obj.(*authorizationv1.LocalSubjectAccessReview))
		},
	},
	{
		info: reviewInfo(authzGV, "SelfSubjectRulesReview", "selfsubjectrulesreviews", false, authorizationv1.SelfSubjectRulesReview{}.OpenAPIModelName()),
		new:  func() runtime.Object { return &authorizationv1.SelfSubjectRulesReview{} },
		create: func(h *Handler, r *http.Request, obj runtime.Object) (runtime.Object, error) {
			return h.selfSubjectRulesReview(r, obj.(*authorizationv1.SelfSubjectRulesReview))
		},
	},
	{
		info: reviewInfo(authnGV, "SelfSubjectReview", "selfsubjectreviews", false, authenticationv1.SelfSubjectReview{}.OpenAPIModelName()),
		new:  func() runtime.Object { return &authenticationv1.SelfSubjectReview{} },
		create: func(h *Handler, r *http.Request, _ runtime.Object) (runtime.Object, error) {
			return h.selfSubjectReview(r)
		},
	},
	{
		info: reviewInfo(authnGV, "TokenReview", "tokenreviews", false, authenticationv1.TokenReview{}.OpenAPIModelName()),
		new:  func() runtime.Object { return &authenticationv1.TokenReview{} },
		create: func(h *Handler, r *http.Request, obj runtime.Object) (runtime.Object, error) {
			return h.tokenReview(r, obj.(*authenticationv1.TokenReview))
		},
	},
}

// Infos are the review kinds' descriptions, for discovery and OpenAPI
// (their definitions are openapi-gen's for k8s.io/api/authorization/v1 and
// authentication/v1, which every module's generated openapi package has).
// Each call returns fresh copies.
func Infos() []*resource.Info {
	out := make([]*resource.Info, len(kinds))
	for i, k := range kinds {
		info := k.info
		out[i] = &info
	}
	return out
}

// Mux is where Install registers the reviews: an *http.ServeMux, or a
// wrapper that adds to each handler.
type Mux interface {
	Handle(pattern string, handler http.Handler)
}

// Install registers the reviews' collections on mux with Go 1.22 patterns
// (more specific than the generic endpoints' /apis/). Each path answers
// POST; any other method gets kube-apiserver's 405.
func (h *Handler) Install(mux Mux) {
	for _, k := range kinds {
		path := "/apis/" + k.info.Group + "/" + k.info.Version + "/"
		if k.info.Namespaced {
			path += "namespaces/{namespace}/"
		}
		mux.Handle(path+k.info.Plural, &kindHandler{h: h, k: k})
	}
}
