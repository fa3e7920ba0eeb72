package apiserver

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	cborserializer "k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/authorization/union"
	"k8s.io/apiserver/pkg/endpoints/filters"
	"k8s.io/apiserver/pkg/endpoints/filters/impersonation"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// The authorization modes --authorization-mode takes, kube-apiserver's
// names. Requests are asked of each in turn; the first to allow or deny
// decides, and a request none allows is refused with 403.
const (
	AuthorizationModeRBAC        = "RBAC"
	AuthorizationModeAlwaysAllow = "AlwaysAllow"
)

var authorizationModes = []string{AuthorizationModeRBAC, AuthorizationModeAlwaysAllow}

func (o *Options) addAuthorizationFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.AuthorizationModes, "authorization-mode", o.AuthorizationModes,
		"ordered list of authorizers asked of every request ("+strings.Join(authorizationModes, ", ")+"); "+
			"the group system:masters is allowed everything before them, as in kube-apiserver")
}

func (o *Options) validateAuthorization() []error {
	var errs []error
	if len(o.AuthorizationModes) == 0 {
		errs = append(errs, fmt.Errorf("--authorization-mode must name at least one of %s", strings.Join(authorizationModes, ", ")))
	}
	seen := map[string]bool{}
	for _, m := range o.AuthorizationModes {
		switch {
		case !slices.Contains(authorizationModes, m):
			errs = append(errs, fmt.Errorf("--authorization-mode: %q is not one of %s", m, strings.Join(authorizationModes, ", ")))
		case seen[m]:
			errs = append(errs, fmt.Errorf("--authorization-mode: %q is given twice", m))
		}
		seen[m] = true
	}
	return errs
}

// authorizers are the decision makers of the chain: the authorizer every
// request passes, and the rule resolver SelfSubjectRulesReview reads.
type authorizers struct {
	authorizer.Authorizer
	rules authorizer.RuleResolver
}

// ruleAuthorizer is an authorizer that can also list a user's rules.
type ruleAuthorizer interface {
	authorizer.Authorizer
	authorizer.RuleResolver
}

// newAuthorizers chains system:masters' bypass and the modes in order,
// with k8s.io/apiserver's union, as kube-apiserver does; rbac is the RBAC
// authorizer, used when RBAC is one of them.
func newAuthorizers(modes []string, rbac ruleAuthorizer) (authorizers, error) {
	chain := []union.NamedAuthorizer{{AuthorizerName: "privileged-groups", Authorizer: authorizerfactory.NewPrivilegedGroups(user.SystemPrivilegedGroup)}}
	var resolvers []authorizer.RuleResolver
	for _, m := range modes {
		var a ruleAuthorizer
		switch m {
		case AuthorizationModeAlwaysAllow:
			a = authorizerfactory.NewAlwaysAllowAuthorizer()
		case AuthorizationModeRBAC:
			if rbac == nil {
				return authorizers{}, errRBACNotServed
			}
			a = rbac
		default:
			return authorizers{}, fmt.Errorf("--authorization-mode: %q is not one of %s", m, strings.Join(authorizationModes, ", "))
		}
		chain = append(chain, union.NamedAuthorizer{AuthorizerName: strings.ToLower(m), Authorizer: a})
		resolvers = append(resolvers, a)
	}
	a, err := union.New(chain...)
	if err != nil {
		return authorizers{}, err
	}
	return authorizers{Authorizer: a, rules: union.NewRuleResolvers(resolvers...)}, nil
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
