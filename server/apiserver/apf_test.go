package apiserver

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/apiserver/pkg/authentication/user"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	apiserverstorage "k8s.io/apiserver/pkg/storage"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	fcrequest "k8s.io/apiserver/pkg/util/flowcontrol/request"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

// apfForTest is APF's controller over a fake clientset holding
// upstream's bootstrap configuration, running until the test ends, once
// a request of an authenticated user is classified by global-default
// (the configuration is digested).
func apfForTest(tb testing.TB, seats int) *flowControl {
	tb.Helper()
	var objs []runtime.Object
	for _, o := range bootstrap.MandatoryFlowSchemas {
		c := o.DeepCopy()
		c.UID = types.UID("uid-" + c.Name)
		objs = append(objs, c)
	}
	for _, o := range bootstrap.SuggestedFlowSchemas {
		c := o.DeepCopy()
		c.UID = types.UID("uid-" + c.Name)
		objs = append(objs, c)
	}
	for _, o := range bootstrap.MandatoryPriorityLevelConfigurations {
		c := o.DeepCopy()
		c.UID = types.UID("uid-" + c.Name)
		objs = append(objs, c)
	}
	for _, o := range bootstrap.SuggestedPriorityLevelConfigurations {
		c := o.DeepCopy()
		c.UID = types.UID("uid-" + c.Name)
		objs = append(objs, c)
	}
	cs := fake.NewClientset(objs...)
	registerAPFMetrics()
	factory := informers.NewSharedInformerFactory(cs, 0)
	ctl := utilflowcontrol.New(factory, cs.FlowcontrolV1(), seats)
	stop := make(chan struct{})
	done := make(chan struct{})
	factory.Start(stop)
	go func() { defer close(done); _ = ctl.Run(stop) }()
	tb.Cleanup(func() { close(stop); <-done; factory.Shutdown() })
	estimate := fcrequest.NewWorkEstimator(
		func(string) (apiserverStats, error) { return apiserverStats{}, fcrequest.ObjectCountNotFoundErr },
		ctl.GetInterestedWatchCount, fcrequest.DefaultWorkEstimatorConfig(), ctl.GetMaxSeats)
	fc := &flowControl{ctl: ctl, factory: factory, estimate: estimate}

	deadline := time.Now().Add(30 * time.Second)
	for {
		var fsName string
		r := benchRequest()
		ctl.Handle(r.Context(), utilflowcontrol.RequestDigest{RequestInfo: requestInfoOf(r), User: userOf(r)},
			func(fs *fsType, _ *plType, _ string) { fsName = fs.Name }, func() fcrequest.WorkEstimate { return fcrequest.WorkEstimate{InitialSeats: 1} },
			func(bool) {}, func() {})
		if fsName == "global-default" {
			return fc
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the bootstrap configuration was not digested in 30s (classified by %q)", fsName)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// benchRequest is a GET of one object by an authenticated user who is
// not in system:masters, with the request info and user the chain's
// earlier filters put in its context.
func benchRequest() *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/default/configmaps/one", nil)
	ctx := apirequest.WithRequestInfo(r.Context(), &apirequest.RequestInfo{IsResourceRequest: true, Path: r.URL.Path,
		Verb: "get", APIPrefix: "api", APIVersion: "v1", Namespace: "default", Resource: "configmaps", Name: "one"})
	ctx = apirequest.WithUser(ctx, &user.DefaultInfo{Name: "alice", Groups: []string{user.AllAuthenticated}})
	return r.WithContext(ctx)
}

func requestInfoOf(r *http.Request) *apirequest.RequestInfo {
	ri, _ := apirequest.RequestInfoFrom(r.Context())
	return ri
}

func userOf(r *http.Request) user.Info {
	u, _ := apirequest.UserFrom(r.Context())
	return u
}

// TestAPFFilterHeaders: a request through the filter is served and
// answered with the UIDs of the schema and level that classified it.
func TestAPFFilterHeaders(t *testing.T) {
	fc := apfForTest(t, 600)
	served := false
	h := withConcurrencyLimit(fc, inFlight{maxWait: time.Second}, prometheus.NewRegistry(),
		http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served = true }))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, benchRequest())
	if !served || w.Code != http.StatusOK {
		t.Fatalf("served %v, code %d", served, w.Code)
	}
	if fs, pl := w.Header().Get("X-Kubernetes-PF-FlowSchema-UID"), w.Header().Get("X-Kubernetes-PF-PriorityLevel-UID"); fs != "uid-global-default" || pl != "uid-global-default" {
		t.Fatalf("X-Kubernetes-PF-FlowSchema-UID %q, X-Kubernetes-PF-PriorityLevel-UID %q; want global-default's", fs, pl)
	}
}

// BenchmarkConcurrencyLimit is what a request pays for the filter at the
// in-flight limit's place: API Priority and Fairness (classification by
// upstream's bootstrap FlowSchemas, work estimate, dispatch through its
// level's queue set) against the max-in-flight limit, serially.
func BenchmarkConcurrencyLimit(b *testing.B) {
	noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, c := range []struct {
		name string
		h    func() http.Handler
	}{
		{"apf", func() http.Handler {
			return withConcurrencyLimit(apfForTest(b, 600), inFlight{maxWait: 15 * time.Second}, prometheus.NewRegistry(), noop)
		}},
		{"maxinflight", func() http.Handler {
			return withConcurrencyLimit(nil, inFlight{readOnly: 400, mutating: 200, maxWait: 15 * time.Second}, prometheus.NewRegistry(), noop)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			h := c.h()
			r := benchRequest()
			w := httptest.NewRecorder()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				h.ServeHTTP(w, r)
			}
		})
	}
}

type (
	apiserverStats = apiserverstorage.Stats
	fsType         = flowcontrolv1.FlowSchema
	plType         = flowcontrolv1.PriorityLevelConfiguration
)
