// Package dynamic is kube-apiserver's dynamic admission in apiloom: the
// ValidatingAdmissionPolicy, MutatingAdmissionPolicy and admission webhook
// plugins of k8s.io/apiserver, unchanged, configured at run time by the
// admissionregistration.k8s.io/v1 objects the server serves, and its
// ResourceQuota plugin, configured by the core/v1 ResourceQuotas. They read
// those objects, their parameters and the namespaces through informers
// over the server's own loopback, as kube-apiserver's do.
package dynamic

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8sadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	mutatingpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	validatingpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/resourcequota"
	webhookinit "k8s.io/apiserver/pkg/admission/plugin/webhook/initializer"
	mutatingwebhook "k8s.io/apiserver/pkg/admission/plugin/webhook/mutating"
	validatingwebhook "k8s.io/apiserver/pkg/admission/plugin/webhook/validating"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	quota "k8s.io/apiserver/pkg/quota/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/compatibility"
	baseversion "k8s.io/component-base/version"

	"github.com/apiloom/apiloom/server/admission"
)

// Plugins are the four plugins of dynamic admission. They join the
// server's chain when it is built (Chain) and are initialized once the
// server listens (Initialize), before it serves.
type Plugins struct {
	mutatingPolicy    *mutatingpolicy.Plugin
	mutatingWebhook   *mutatingwebhook.Plugin
	validatingPolicy  *validatingpolicy.Plugin
	validatingWebhook *validatingwebhook.Plugin
	resourceQuota     *resourcequota.QuotaAdmission
}

// Names are the plugins' names, upstream's.
var Names = []string{admission.MutatingAdmissionPolicy, admission.MutatingAdmissionWebhook,
	admission.ValidatingAdmissionPolicy, admission.ValidatingAdmissionWebhook, admission.ResourceQuota}

// quotaWorkers are the namespaces the ResourceQuota plugin evaluates at
// once, kube-apiserver's (its plugin factory's 5).
const quotaWorkers = 5

// New returns the plugins that enabled names, with upstream's default
// configuration; nil when it names none.
func New(enabled func(name string) bool) (*Plugins, error) {
	var p Plugins
	var err error
	any := false
	if enabled(admission.MutatingAdmissionPolicy) {
		any = true
		if p.mutatingPolicy, err = mutatingpolicy.NewPlugin(nil); err != nil {
			return nil, fmt.Errorf("%s: %w", admission.MutatingAdmissionPolicy, err)
		}
	}
	if enabled(admission.MutatingAdmissionWebhook) {
		any = true
		if p.mutatingWebhook, err = mutatingwebhook.NewMutatingWebhook(nil); err != nil {
			return nil, fmt.Errorf("%s: %w", admission.MutatingAdmissionWebhook, err)
		}
	}
	if enabled(admission.ValidatingAdmissionPolicy) {
		any = true
		if p.validatingPolicy, err = validatingpolicy.NewPlugin(nil); err != nil {
			return nil, fmt.Errorf("%s: %w", admission.ValidatingAdmissionPolicy, err)
		}
	}
	if enabled(admission.ValidatingAdmissionWebhook) {
		any = true
		if p.validatingWebhook, err = validatingwebhook.NewValidatingAdmissionWebhook(nil); err != nil {
			return nil, fmt.Errorf("%s: %w", admission.ValidatingAdmissionWebhook, err)
		}
	}
	if enabled(admission.ResourceQuota) {
		any = true
		if p.resourceQuota, err = resourcequota.NewResourceQuota(nil, quotaWorkers); err != nil {
			return nil, fmt.Errorf("%s: %w", admission.ResourceQuota, err)
		}
	}
	if !any {
		return nil, nil
	}
	return &p, nil
}

// plugins are those of p that run.
func (p *Plugins) plugins() []k8sadmission.Interface {
	var out []k8sadmission.Interface
	if p.mutatingPolicy != nil {
		out = append(out, p.mutatingPolicy)
	}
	if p.mutatingWebhook != nil {
		out = append(out, p.mutatingWebhook)
	}
	if p.validatingPolicy != nil {
		out = append(out, p.validatingPolicy)
	}
	if p.validatingWebhook != nil {
		out = append(out, p.validatingWebhook)
	}
	if p.resourceQuota != nil {
		out = append(out, p.resourceQuota)
	}
	return out
}

// Chain are the plugins as the server's chain takes them
// (admission.New); none when p is nil.
func (p *Plugins) Chain() admission.Dynamic {
	if p == nil {
		return admission.Dynamic{}
	}
	return admission.Dynamic{
		MutatingPolicy:    p.mutatingPolicy,
		MutatingWebhook:   p.mutatingWebhook,
		ValidatingPolicy:  p.validatingPolicy,
		ValidatingWebhook: p.validatingWebhook,
		ResourceQuota:     p.resourceQuota,
	}
}

// Env is how the plugins read the server.
type Env struct {
	// Client reaches the cluster whose objects configure the plugins, as
	// a user that may read them and the parameters: the server itself
	// through its loopback, or an aggregated server's host.
	Client *rest.Config
	// Authorizer is the server's: the policies' `authorizer` variable and
	// their check that a binding's writer may read its parameters.
	Authorizer authorizer.Authorizer
	// RESTMapper finds the resource of a policy's paramKind.
	RESTMapper meta.RESTMapper
	// Quota is what the ResourceQuota plugin counts with: an object-count
	// evaluator for each served kind (server/admission/quota).
	Quota quota.Configuration
}

// Virtual resources no policy or webhook sees, as kube-apiserver
// excludes them: the reviews, which store nothing.
var excluded = []schema.GroupResource{
	{Group: "authentication.k8s.io", Resource: "tokenreviews"},
	{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"},
	{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"},
	{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"},
	{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"},
	{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"},
}

// Initialize gives the plugins their clients and informers, which serve
// until ctx ends, and checks them. It returns the function that starts
// the informers: call it once the server serves, since they list it; wg
// then waits for them to stop after ctx ends. The
// plugins refuse writes until their informers have synced (up to ten
// seconds each, then 403 "not yet ready to handle request", as upstream).
func (p *Plugins) Initialize(ctx context.Context, env Env) (start func(wg *sync.WaitGroup), err error) {
	if p == nil {
		return func(*sync.WaitGroup) {}, nil
	}
	cfg := rest.CopyConfig(env.Client)
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	// kube-apiserver's shared informers resync every ten minutes.
	factory := informers.NewSharedInformerFactory(client, 10*time.Minute)
	inits := k8sadmission.PluginInitializers{
		initializer.New(client, dyn, factory, env.Authorizer, utilfeature.DefaultFeatureGate,
			compatibility.NewEffectiveVersionFromString(baseversion.DefaultKubeBinaryVersion, "", ""), ctx.Done(), env.RESTMapper),
		webhookinit.NewPluginInitializer(nil, webhook.NewDefaultServiceResolver()),
		excludedResources{},
		quotaConfiguration{env.Quota},
	}
	for _, plugin := range p.plugins() {
		inits.Initialize(plugin)
		if err := k8sadmission.ValidateInitialization(plugin); err != nil {
			return nil, err
		}
	}
	return func(wg *sync.WaitGroup) {
		factory.Start(ctx.Done())
		wg.Go(func() { <-ctx.Done(); factory.Shutdown() })
	}, nil
}

// excludedResources tells the plugins which resources to leave alone.
type excludedResources struct{}

func (excludedResources) Initialize(plugin k8sadmission.Interface) {
	if wants, ok := plugin.(initializer.WantsExcludedAdmissionResources); ok {
		wants.SetExcludedAdmissionResources(excluded)
	}
}

// quotaConfiguration gives the ResourceQuota plugin its evaluators. It
// runs after upstream's initializer, which gives the plugin the stop
// channel its evaluator's workers need first.
type quotaConfiguration struct{ cfg quota.Configuration }

func (q quotaConfiguration) Initialize(plugin k8sadmission.Interface) {
	if wants, ok := plugin.(initializer.WantsQuotaConfiguration); ok && q.cfg != nil {
		wants.SetQuotaConfiguration(q.cfg)
	}
}
