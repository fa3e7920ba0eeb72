package serviceaccount

import (
	"context"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/apiloom/apiloom/server/controllers"
)

// The ConfigMap the root-ca-cert-publisher keeps, in upstream's words.
const (
	RootCAConfigMap       = "kube-root-ca.crt"
	RootCAKey             = "ca.crt"
	DescriptionAnnotation = "kubernetes.io/description"
	Description           = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
		"No other usage is guaranteed across distributions of Kubernetes clusters."
)

// RootCAPublisher is kube-controller-manager's root-ca-cert-publisher.
type RootCAPublisher struct{ loop perNamespace }

var _ controllers.Controller = (*RootCAPublisher)(nil)

// NewRootCAPublisher publishes caPEM in every namespace.
func NewRootCAPublisher(caPEM []byte) *RootCAPublisher {
	data := map[string]string{RootCAKey: string(caPEM)}
	return &RootCAPublisher{loop: perNamespace{
		name:   "root-ca-certificate-publisher-controller",
		object: RootCAConfigMap,
		informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().ConfigMaps().Informer()
		},
		sync: func(ctx context.Context, client kubernetes.Interface, objects cache.Indexer, namespace string) error {
			return syncRootCA(ctx, client, objects, namespace, data)
		},
		workers: 1,
	}}
}

// Name implements controllers.Controller.
func (c *RootCAPublisher) Name() string { return c.loop.name }

// Run implements controllers.Controller.
func (c *RootCAPublisher) Run(ctx context.Context, env *controllers.Env) error {
	return c.loop.run(ctx, env)
}

// syncRootCA creates the ConfigMap, or puts back its data and description
// when they differ, keeping whatever else its owner added.
func syncRootCA(ctx context.Context, client kubernetes.Interface, objects cache.Indexer, namespace string, data map[string]string) error {
	cm := cached[corev1.ConfigMap](objects, namespace, RootCAConfigMap)
	if cm == nil {
		_, err := client.CoreV1().ConfigMaps(namespace).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: RootCAConfigMap, Annotations: map[string]string{DescriptionAnnotation: Description}},
			Data:       maps.Clone(data),
		}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil // the informer will tell of it
		}
		return err
	}
	if maps.Equal(cm.Data, data) && cm.Annotations[DescriptionAnnotation] != "" {
		return nil
	}
	cm = cm.DeepCopy()
	cm.Data = maps.Clone(data)
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[DescriptionAnnotation] = Description
	_, err := client.CoreV1().ConfigMaps(namespace).Update(ctx, cm, metav1.UpdateOptions{})
	return err
}
