package testserver

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// CreateNamespaces creates the namespaces names (those that exist already
// are fine): a server that serves namespaces admits writes only into
// namespaces that exist, as kube-apiserver does. It fails the test on any
// other error.
func (s *TestServer) CreateNamespaces(t testing.TB, names ...string) {
	t.Helper()
	client, err := kubernetes.NewForConfig(s.Config)
	if err != nil {
		t.Fatalf("testserver: %v", err)
	}
	for _, name := range names {
		_, err := client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("testserver: create namespace %s: %v", name, err)
		}
	}
}
