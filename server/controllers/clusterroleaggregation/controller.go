// Package clusterroleaggregation is kube-controller-manager's
// clusterrole-aggregation controller, run inside the server (package
// controllers): the rules of a ClusterRole with an aggregationRule are
// kept the union of the rules of the ClusterRoles its selectors match
// (itself excepted), in the order of the selectors and, for each, of the
// matching roles' names, each distinct rule once. A change to any
// ClusterRole (a new one labelled aggregate-to-view, a rule added to
// one) re-aggregates every aggregating ClusterRole.
//
// It is driven by an informer on ClusterRoles (a watch served from the
// watch cache), and writes the rules as upstream does, by a server-side
// apply with its own field manager that forces ownership of them.
package clusterroleaggregation

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/apiloom/apiloom/server/controllers"
)

// FieldManager is the manager of the rules the controller writes,
// upstream's.
const FieldManager = "clusterrole-aggregation-controller"

// Config configures the controller; DefaultConfig is
// kube-controller-manager's.
type Config struct {
	// Workers is how many ClusterRoles are aggregated at once.
	Workers int
	// RetryBase and RetryMax bound the exponential backoff of a role
	// whose write failed.
	RetryBase, RetryMax time.Duration
}

// DefaultConfig is kube-controller-manager's: 5 workers, and client-go's
// default backoff.
func DefaultConfig() Config {
	return Config{Workers: 5, RetryBase: 5 * time.Millisecond, RetryMax: 1000 * time.Second}
}

// Controller is the clusterrole-aggregation controller.
type Controller struct {
	cfg Config
}

var _ controllers.Controller = (*Controller)(nil)

// New returns the controller with cfg.
func New(cfg Config) *Controller { return &Controller{cfg: cfg} }

// Name implements controllers.Controller.
func (c *Controller) Name() string { return "clusterrole-aggregation-controller" }

// Run implements controllers.Controller.
func (c *Controller) Run(ctx context.Context, env *controllers.Env) error {
	client, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		return fmt.Errorf("clusterrole aggregation: %w", err)
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	roles := factory.Rbac().V1().ClusterRoles()
	lister := roles.Lister()
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](c.cfg.RetryBase, c.cfg.RetryMax),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "clusterrole-aggregation"})
	// Any change may change what any aggregating role gathers: every one
	// is queued, as upstream does.
	enqueueAll := func(any) {
		all, err := lister.List(labels.Everything())
		if err != nil {
			return
		}
		for _, r := range all {
			if r.AggregationRule != nil {
				queue.Add(r.Name)
			}
		}
	}
	if _, err := roles.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueueAll,
		UpdateFunc: func(_, obj any) { enqueueAll(obj) },
		DeleteFunc: enqueueAll,
	}); err != nil {
		return fmt.Errorf("clusterrole aggregation: %w", err)
	}
	a := &aggregator{client: client, lister: lister}

	factory.Start(ctx.Done())
	defer factory.Shutdown()
	defer queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), roles.Informer().HasSynced) {
		return ctx.Err()
	}
	var wg sync.WaitGroup
	for range c.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for worker(ctx, queue, a, env) {
			}
		}()
	}
	<-ctx.Done()
	queue.ShutDown()
	wg.Wait()
	return nil
}

// worker aggregates the next role of queue; false once the queue is shut
// down.
func worker(ctx context.Context, queue workqueue.TypedRateLimitingInterface[string], a *aggregator, env *controllers.Env) bool {
	name, quit := queue.Get()
	if quit {
		return false
	}
	defer queue.Done(name)
	switch err := a.sync(ctx, name); {
	case err == nil:
		queue.Forget(name)
	case ctx.Err() != nil:
	default:
		env.Log.Warn("clusterrole aggregation failed; retrying", "clusterrole", name, "err", err)
		queue.AddRateLimited(name)
	}
	return true
}

// aggregator writes the aggregated rules of a ClusterRole.
type aggregator struct {
	client kubernetes.Interface
	lister rbaclisters.ClusterRoleLister
}

// sync makes the rules of the ClusterRole name, when it aggregates, the
// union its selectors gather (Aggregate); nothing when they are already.
func (a *aggregator) sync(ctx context.Context, name string) error {
	role, err := a.lister.Get(name)
	if err != nil || role.AggregationRule == nil {
		return nil // gone, or no longer aggregating
	}
	all, err := a.lister.List(labels.Everything())
	if err != nil {
		return err
	}
	rules, err := Aggregate(role, all)
	if err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(rules, role.Rules) {
		return nil
	}
	apply := rbacv1ac.ClusterRole(name)
	for i := range rules {
		r := &rules[i]
		apply.WithRules(rbacv1ac.PolicyRule().WithVerbs(r.Verbs...).WithAPIGroups(r.APIGroups...).
			WithResources(r.Resources...).WithResourceNames(r.ResourceNames...).WithNonResourceURLs(r.NonResourceURLs...))
	}
	_, err = a.client.RbacV1().ClusterRoles().Apply(ctx, apply, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	return err
}

// Aggregate is the rules role's aggregationRule gathers from all: for
// each selector in order, the rules of the roles it matches but role, by
// name, each rule not gathered already. A selector that is not valid is
// an error.
func Aggregate(role *rbacv1.ClusterRole, all []*rbacv1.ClusterRole) ([]rbacv1.PolicyRule, error) {
	rules := []rbacv1.PolicyRule{}
	sorted := slices.Clone(all)
	slices.SortFunc(sorted, func(a, b *rbacv1.ClusterRole) int { return strings.Compare(a.Name, b.Name) })
	for i := range role.AggregationRule.ClusterRoleSelectors {
		sel, err := metav1.LabelSelectorAsSelector(&role.AggregationRule.ClusterRoleSelectors[i])
		if err != nil {
			return nil, err
		}
		for _, r := range sorted {
			if r.Name == role.Name || !sel.Matches(labels.Set(r.Labels)) {
				continue
			}
			for _, rule := range r.Rules {
				if !slices.ContainsFunc(rules, func(have rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(have, rule) }) {
					rules = append(rules, rule)
				}
			}
		}
	}
	return rules, nil
}
