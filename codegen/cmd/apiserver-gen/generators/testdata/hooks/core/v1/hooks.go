// Package v1 is hooks of a built-in kind for TestBuiltinHooks.
package v1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apiloom/apiloom/server/hook"
)

type ConfigMap struct{}

func (ConfigMap) ValidateCreate(*hook.Request, *corev1.ConfigMap) (hook.Warnings, field.ErrorList) {
	return nil, nil
}

func (ConfigMap) PrepareForUpdate(*hook.Request, *corev1.ConfigMap, *corev1.ConfigMap) {}
