package serviceaccount

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/apiloom/apiloom/server/controllers"
)

// DefaultServiceAccount is the ServiceAccount every namespace gets.
const DefaultServiceAccount = "default"

// ServiceAccounts is kube-controller-manager's serviceaccount controller.
type ServiceAccounts struct{ loop perNamespace }

var _ controllers.Controller = (*ServiceAccounts)(nil)

// NewServiceAccounts returns the controller (upstream's: one worker
// a namespace at a time, --concurrent-serviceaccount-token-syncs aside).
func NewServiceAccounts() *ServiceAccounts {
	return &ServiceAccounts{loop: perNamespace{
		name:   "serviceaccount-controller",
		object: DefaultServiceAccount,
		informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().ServiceAccounts().Informer()
		},
		sync:    syncServiceAccount,
		workers: 1,
	}}
}

// Name implements controllers.Controller.
func (c *ServiceAccounts) Name() string { return c.loop.name }

// Run implements controllers.Controller.
func (c *ServiceAccounts) Run(ctx context.Context, env *controllers.Env) error {
	return c.loop.run(ctx, env)
}

// syncServiceAccount creates the default ServiceAccount when it is not
// there; one that is there is left as its owner made it, as upstream.
func syncServiceAccount(ctx context.Context, client kubernetes.Interface, objects cache.Indexer, namespace string) error {
	if cached[corev1.ServiceAccount](objects, namespace, DefaultServiceAccount) != nil {
		return nil
	}
	_, err := client.CoreV1().ServiceAccounts(namespace).Create(ctx,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: DefaultServiceAccount}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil // the informer has not seen it yet
	}
	return err
}
