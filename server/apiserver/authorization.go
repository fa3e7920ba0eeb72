package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	cborserializer "k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	authorizationcel "k8s.io/apiserver/pkg/authorization/cel"
	"k8s.io/apiserver/pkg/endpoints/filters"
	"k8s.io/apiserver/pkg/endpoints/filters/impersonation"
	"k8s.io/apiserver/pkg/endpoints/request"

	"github.com/apiloom/apiloom/server/authz/authzconfig"
)

// authorizers are the decision makers of the chain: the authorizer every
// request passes, and the rule resolver SelfSubjectRulesReview reads.
type authorizers struct {
	authorizer.Authorizer
	rules authorizer.RuleResolver
}

// ruleAuthorizer is an authorizer that can also list a user's rules.
type ruleAuthorizer = authzconfig.RuleAuthorizer

// startAuthorizers builds the chain the options configure (flags or
// --authorization-config) and, for a file, keeps reloading it in the
// background until ctx ends. The RBAC authorizer rbac, when RBAC is on,
// is shared by every chain a reload builds.
func (s *Server) startAuthorizers(ctx context.Context, rbac rbacAuthorizer, background *sync.WaitGroup) (authorizers, error) {
	c, data, err := s.opts.authorizationConfiguration()
	if err != nil {
		return authorizers{}, fmt.Errorf("--authorization-config: %w", err)
	}
	opts := s.opts.AuthorizationConfig
	b := &authzconfig.Builder{Backoff: opts.RetryBackoff, Compiler: authorizationcel.NewDefaultCompiler()}
	if rbac != nil {
		b.RBAC = rbac
	} else if authzconfig.Uses(c, AuthorizationModeRBAC) {
		return authorizers{}, errRBACNotServed
	}
	id, _ := os.Hostname()
	r, err := authzconfig.NewReloadable(b, c, opts.File, data, opts.ReloadInterval, "apiloom-"+id, s.log.With("component", "authorization"))
	if err != nil {
		return authorizers{}, err
	}
	background.Add(1)
	go func() { defer background.Done(); r.Run(ctx) }()
	return authorizers{Authorizer: r, rules: r}, nil
}

// statusCodecs encode the Status objects the k8s.io/apiserver filters
// answer with (403 Forbidden, 500), negotiated with the client's Accept
// header as every other error is (responsewriters.WriteError): JSON, YAML,
// protobuf, and CBOR when it is served.
func statusCodecs(cbor bool) runtime.NegotiatedSerializer {
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	var opts []serializer.CodecFactoryOptionsMutator
	if cbor {
		opts = append(opts, serializer.WithSerializer(cborserializer.NewSerializerInfo))
	}
	return serializer.WithoutConversionCodecFactory{CodecFactory: serializer.NewCodecFactory(scheme, opts...)}
}

// requestInfoResolver reads from a request's path and query what it
// does to what (verb, group, resource, subresource, namespace, name), as
// kube-apiserver does, for authorization and impersonation.
func requestInfoResolver() request.RequestInfoResolver {
	return &request.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}
}

// withAuthorization refuses, with upstream's 403 Forbidden Status, every
// request authz does not allow; withImpersonation acts on the
// Impersonate-* headers of a request its user may impersonate with, and
// refuses the others. Both read the request info withRequestInfo adds.
// Health checks need no permission, as they need no credentials.
func withAuthorization(authz authorizer.UnconditionalAuthorizer, cbor bool, next http.Handler) http.Handler {
	guarded := filters.WithAuthorization(next, authz, statusCodecs(cbor))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isOpenPath(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		guarded.ServeHTTP(w, r)
	})
}

func withImpersonation(authz authorizer.UnconditionalAuthorizer, cbor bool, next http.Handler) http.Handler {
	return impersonation.WithImpersonation(next, authz, statusCodecs(cbor))
}

func withRequestInfo(next http.Handler) http.Handler {
	return filters.WithRequestInfo(next, requestInfoResolver())
}
