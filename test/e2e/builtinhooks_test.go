package e2e

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	apiserver "github.com/apiloom/apiloom/generated/apiserver"
	gencorev1 "github.com/apiloom/apiloom/generated/apiserver/core/v1"
	"github.com/apiloom/apiloom/server/hook"
	"github.com/apiloom/apiloom/server/registry"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/testserver"
)

// TestBuiltinKindHooks: a built-in kind takes hooks as a kind of apis/
// does (apiserver-gen wires hooks/core/v1's ConfigMap type), run by the
// same admission chain: a Default hook's label and a ValidateCreate
// hook's refusal and warning, for ConfigMaps.
func TestBuiltinKindHooks(t *testing.T) {
	install := func(r *registry.Registry) {
		all := &registry.Registry{}
		apiserver.Install(all)
		cm := *gencorev1.ConfigMap
		cm.Hooks = &hook.Hooks[*corev1.ConfigMap]{
			Default: func(_ *hook.Request, obj *corev1.ConfigMap) {
				if obj.Labels == nil {
					obj.Labels = map[string]string{}
				}
				obj.Labels["defaulted"] = "yes"
			},
			ValidateCreate: func(_ *hook.Request, obj *corev1.ConfigMap) (hook.Warnings, field.ErrorList) {
				if _, ok := obj.Data["password"]; ok {
					return nil, field.ErrorList{field.Forbidden(field.NewPath("data", "password"), "use a Secret")}
				}
				return hook.Warnings{"checked by a hook"}, nil
			},
		}
		*r = *all.Select(func(i *resource.Info) bool { return i.GroupResource() != cm.GroupResource() })
		registry.Register(r, &cm)
	}
	ts := testserver.Start(t, install, testserver.WithHTTP2Server(http2Server(t)))
	warnings := &warningRecorder{}
	cfg := rest.CopyConfig(ts.Config)
	cfg.WarningHandlerWithContext = warnings
	kc := kubernetes.NewForConfigOrDie(cfg)
	ts.CreateNamespaces(t, "app")
	ctx := t.Context()
	cm, err := kc.CoreV1().ConfigMaps("app").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Labels["defaulted"] != "yes" {
		t.Fatalf("the Default hook's label: %v", cm.Labels)
	}
	if w := warnings.take(); !slices.Contains(w, "checked by a hook") {
		t.Fatalf("warnings: %q", w)
	}
	_, err = kc.CoreV1().ConfigMaps("app").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "leak"}, Data: map[string]string{"password": "x"}}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "data.password: Forbidden: use a Secret") {
		t.Fatalf("create with a password: %v", err)
	}
}
