package apfbootstrap

import (
	"context"
	"log/slog"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// ensureOnce runs one round over a fake clientset holding objs, once the
// informers have read them.
func ensureOnce(t *testing.T, cs *fake.Clientset) {
	t.Helper()
	factory := informers.NewSharedInformerFactory(cs, 0)
	e, err := New(cs.FlowcontrolV1(), factory, time.Hour, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	for _, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatal("informers did not sync")
		}
	}
	if err := e.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
}

func TestEnsureCreatesEverything(t *testing.T) {
	cs := fake.NewClientset()
	ensureOnce(t, cs)
	fss, _ := cs.FlowcontrolV1().FlowSchemas().List(t.Context(), metav1.ListOptions{})
	plcs, _ := cs.FlowcontrolV1().PriorityLevelConfigurations().List(t.Context(), metav1.ListOptions{})
	if want := len(bootstrap.MandatoryFlowSchemas) + len(bootstrap.SuggestedFlowSchemas); len(fss.Items) != want {
		t.Fatalf("%d FlowSchemas, want %d", len(fss.Items), want)
	}
	if want := len(bootstrap.MandatoryPriorityLevelConfigurations) + len(bootstrap.SuggestedPriorityLevelConfigurations); len(plcs.Items) != want {
		t.Fatalf("%d PriorityLevelConfigurations, want %d", len(plcs.Items), want)
	}
}

// TestEnsureAutoUpdateSemantics: a changed mandatory spec is restored;
// a suggested one is restored while autoupdate-spec is true, kept when
// false, and kept without the annotation once its generation moved; an
// unwanted object marked autoupdate-spec=true is deleted, a user's kept.
func TestEnsureAutoUpdateSemantics(t *testing.T) {
	mandatory := bootstrap.MandatoryPriorityLevelConfigurationCatchAll.DeepCopy()
	mandatory.Spec.Limited.NominalConcurrencyShares = ptr.To[int32](99)
	mandatory.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] = "false"

	auto := bootstrap.SuggestedPriorityLevelConfigurationWorkloadLow.DeepCopy()
	auto.Spec.Limited.NominalConcurrencyShares = ptr.To[int32](99)

	kept := bootstrap.SuggestedPriorityLevelConfigurationWorkloadHigh.DeepCopy()
	kept.Spec.Limited.NominalConcurrencyShares = ptr.To[int32](99)
	kept.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] = "false"

	edited := bootstrap.SuggestedPriorityLevelConfigurationGlobalDefault.DeepCopy()
	edited.Spec.Limited.NominalConcurrencyShares = ptr.To[int32](99)
	edited.Annotations = nil
	edited.Generation = 2

	unwanted := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "retired",
		Annotations: map[string]string{flowcontrolv1.AutoUpdateAnnotationKey: "true"}}}
	users := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "users"}}

	cs := fake.NewClientset(mandatory, auto, kept, edited, unwanted, users)
	ensureOnce(t, cs)
	get := func(name string) *flowcontrolv1.PriorityLevelConfiguration {
		t.Helper()
		p, err := cs.FlowcontrolV1().PriorityLevelConfigurations().Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return nil
		}
		return p
	}
	for name, want := range map[string]struct {
		shares     int32
		annotation string
	}{
		mandatory.Name: {5, "true"},
		auto.Name:      {*bootstrap.SuggestedPriorityLevelConfigurationWorkloadLow.Spec.Limited.NominalConcurrencyShares, "true"},
		kept.Name:      {99, "false"},
		edited.Name:    {99, "false"},
	} {
		p := get(name)
		if p == nil || *p.Spec.Limited.NominalConcurrencyShares != want.shares || p.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] != want.annotation {
			t.Errorf("%s: %+v, want shares %d and autoupdate-spec %q", name, p, want.shares, want.annotation)
		}
	}
	if get("retired") != nil {
		t.Error("the unwanted object marked autoupdate-spec=true was kept")
	}
	if get("users") == nil {
		t.Error("the user's object was deleted")
	}
}
