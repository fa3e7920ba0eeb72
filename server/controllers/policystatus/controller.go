// Package policystatus is kube-controller-manager's
// validatingadmissionpolicy-status controller, run inside the server
// (package controllers): each ValidatingAdmissionPolicy whose generation
// its status has not observed is type-checked against the schemas of the
// kinds it matches (k8s.io/apiserver's TypeChecker, reading the server's
// own /openapi/v3), and the expressions' warnings are written into its
// status.typeChecking with the generation observed, by a server-side apply
// of the status with upstream's field manager.
package policystatus

import (
	"context"
	"errors"
	"fmt"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	admissionregistrationv1ac "k8s.io/client-go/applyconfigurations/admissionregistration/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/apiloom/apiloom/server/controllers"
)

// FieldManager is the manager of the status the controller writes,
// upstream's.
const FieldManager = "validatingadmissionpolicy-status"

// Controller is the validatingadmissionpolicy-status controller.
type Controller struct {
	workers int
}

var _ controllers.Controller = (*Controller)(nil)

// New returns the controller, with workers policies checked at once
// (kube-controller-manager runs 5).
func New(workers int) *Controller { return &Controller{workers: max(workers, 1)} }

// Name implements controllers.Controller.
func (c *Controller) Name() string { return "validatingadmissionpolicy-status-controller" }

// Run implements controllers.Controller.
func (c *Controller) Run(ctx context.Context, env *controllers.Env) error {
	if env.RESTMapper == nil {
		return errors.New("validatingadmissionpolicy status: no REST mapper")
	}
	client, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		return fmt.Errorf("validatingadmissionpolicy status: %w", err)
	}
	checker := &validating.TypeChecker{
		SchemaResolver: &resolver.ClientDiscoveryResolver{Discovery: client.Discovery()},
		RestMapper:     env.RESTMapper,
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	policies := factory.Admissionregistration().V1().ValidatingAdmissionPolicies()
	lister := policies.Lister()
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: FieldManager})
	enqueue := func(obj any) {
		if p, ok := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy); ok {
			queue.Add(p.Name)
		}
	}
	if _, err := policies.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), policies.Informer().HasSynced) {
		queue.ShutDown()
		return ctx.Err()
	}
	var wg sync.WaitGroup
	for range c.workers {
		wg.Go(func() {
			for {
				name, shutdown := queue.Get()
				if shutdown {
					return
				}
				err := reconcile(ctx, client, checker, lister.Get, name)
				if err != nil && ctx.Err() == nil {
					env.Log.Warn("validatingadmissionpolicy status", "policy", name, "err", err)
					queue.AddRateLimited(name)
				} else {
					queue.Forget(name)
				}
				queue.Done(name)
			}
		})
	}
	<-ctx.Done()
	queue.ShutDown()
	wg.Wait()
	return nil
}

// reconcile type-checks the policy name unless its status has observed
// its generation, and writes the warnings into its status.
func reconcile(ctx context.Context, client kubernetes.Interface, checker *validating.TypeChecker,
	get func(string) (*admissionregistrationv1.ValidatingAdmissionPolicy, error), name string) error {
	policy, err := get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if policy.Generation <= policy.Status.ObservedGeneration {
		return nil
	}
	warnings := checker.Check(policy)
	typeChecking := admissionregistrationv1ac.TypeChecking()
	for _, w := range warnings {
		typeChecking.WithExpressionWarnings(admissionregistrationv1ac.ExpressionWarning().WithFieldRef(w.FieldRef).WithWarning(w.Warning))
	}
	status := admissionregistrationv1ac.ValidatingAdmissionPolicy(name).WithStatus(
		admissionregistrationv1ac.ValidatingAdmissionPolicyStatus().WithObservedGeneration(policy.Generation).WithTypeChecking(typeChecking))
	_, err = client.AdmissionregistrationV1().ValidatingAdmissionPolicies().ApplyStatus(ctx, status,
		metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	return err
}
