package authzconfig

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	api "k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/server/options/authorizationconfig/metrics"
	"k8s.io/apiserver/pkg/util/filesystem"
)

// Reloadable is the chain every request is asked of. It is built from a
// configuration at start and, with a file, rebuilt when the file changes,
// as kube-apiserver's: a file that does not load, validate or build keeps
// the chain in place, and is logged and counted
// (apiserver_authorization_config_controller_automatic_reloads_total).
// A reload may change the webhooks, their order and the other
// authorizers' places, but not drop a type other than Webhook the server
// started with (its state, such as RBAC's caches, is made at start).
type Reloadable struct {
	builder  *Builder
	file     string
	interval time.Duration
	serverID string
	log      *slog.Logger
	require  sets.Set[api.AuthorizerType]

	mu         sync.Mutex // serialises reloads
	lastData   []byte
	lastConfig *api.AuthorizationConfiguration

	current atomic.Pointer[built]
}

type built struct {
	authorizer.Authorizer
	rules authorizer.RuleResolver
}

var (
	_ authorizer.Authorizer   = (*Reloadable)(nil)
	_ authorizer.RuleResolver = (*Reloadable)(nil)
)

// NewReloadable builds c's chain. file is where c was read from (data its
// content), reread by Run every interval and on every change the
// filesystem reports; "" when c came from flags, which do not change.
// serverID labels the reload metrics, as kube-apiserver's identity does.
func NewReloadable(b *Builder, c *api.AuthorizationConfiguration, file string, data []byte, interval time.Duration, serverID string, log *slog.Logger) (*Reloadable, error) {
	a, rules, err := b.Build(c)
	if err != nil {
		return nil, err
	}
	require := sets.New[api.AuthorizerType]()
	for _, ac := range c.Authorizers {
		require.Insert(ac.Type)
	}
	require.Delete(api.TypeWebhook)
	if file != "" {
		metrics.RegisterMetrics() // before any record: it sets up their hashing
	}
	r := &Reloadable{builder: b, file: file, interval: interval, serverID: serverID, log: log,
		require: require, lastData: data, lastConfig: c}
	r.current.Store(&built{Authorizer: a, rules: rules})
	return r, nil
}

// Authorize asks the current chain.
func (r *Reloadable) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	return r.current.Load().Authorize(ctx, a)
}

// ConditionsAwareAuthorize asks the current chain.
func (r *Reloadable) ConditionsAwareAuthorize(ctx context.Context, a authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return r.current.Load().ConditionsAwareAuthorize(ctx, a)
}

// EvaluateConditions asks the current chain.
func (r *Reloadable) EvaluateConditions(ctx context.Context, d authorizer.ConditionsAwareDecision, data authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return r.current.Load().EvaluateConditions(ctx, d, data)
}

// RulesFor lists u's rules in the current chain.
func (r *Reloadable) RulesFor(ctx context.Context, u user.Info, ns string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	return r.current.Load().rules.RulesFor(ctx, u, ns)
}

// Run watches the file and reloads the chain when it changes, until ctx
// ends; without a file it returns at once.
func (r *Reloadable) Run(ctx context.Context) {
	if r.file == "" {
		return
	}
	r.mu.Lock()
	metrics.RecordAuthorizationConfigLastConfigInfo(r.serverID, string(r.lastData))
	r.mu.Unlock()
	filesystem.WatchUntil(ctx, r.interval, r.file, func() { r.Check() }, func(err error) {
		r.log.Warn("watching the authorization configuration", "file", r.file, "err", err)
	})
}

// Check rereads the file and, if its content changed and is a valid
// configuration that builds, swaps the chain; it reports whether it did.
// A file that fails keeps the chain, and is not tried again until it
// changes.
func (r *Reloadable) Check() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	data, err := os.ReadFile(r.file)
	if err != nil {
		r.failed(err)
		return false
	}
	if bytes.Equal(data, r.lastData) {
		return false
	}
	r.lastData = data
	c, err := LoadData(data, r.builder.Compiler, r.require)
	if err != nil {
		r.failed(err)
		return false
	}
	if reflect.DeepEqual(c, r.lastConfig) {
		return false
	}
	a, rules, err := r.builder.Build(c)
	if err != nil {
		r.failed(err)
		return false
	}
	r.lastConfig = c
	r.current.Store(&built{Authorizer: a, rules: rules})
	r.log.Info("reloaded the authorization configuration", "file", r.file, "authorizers", len(c.Authorizers))
	metrics.RecordAuthorizationConfigAutomaticReloadSuccess(r.serverID, string(data))
	return true
}

func (r *Reloadable) failed(err error) {
	r.log.Error("reloading the authorization configuration: keeping the current chain", "file", r.file, "err", fmt.Sprint(err))
	metrics.RecordAuthorizationConfigAutomaticReloadFailure(r.serverID)
}
