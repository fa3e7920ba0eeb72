package main

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// namespacesGVR is core/v1's namespaces.
var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// ensureNamespace creates the namespace the load works in, where the
// server admits writes by their namespace (apiloom serving namespaces,
// kube-apiserver): one that exists already, or a server that serves no
// namespaces (404), is fine.
func (t *target) ensureNamespace(ctx context.Context) error {
	dyn, err := dynamic.NewForConfig(t.freshConfig())
	if err != nil {
		return err
	}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace"}}
	ns.SetName(t.namespace)
	_, err = dyn.Resource(namespacesGVR).Create(ctx, ns, metav1.CreateOptions{})
	if err == nil || apierrors.IsAlreadyExists(err) || apierrors.IsNotFound(err) {
		return nil
	}
	return fmt.Errorf("create namespace %s: %w", t.namespace, err)
}
