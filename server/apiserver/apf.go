package apiserver

import (
	"context"
	"net"
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/server/filters"
	"k8s.io/apiserver/pkg/server/mux"
	apiserverstorage "k8s.io/apiserver/pkg/storage"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	fcmetrics "k8s.io/apiserver/pkg/util/flowcontrol/metrics"
	fcrequest "k8s.io/apiserver/pkg/util/flowcontrol/request"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/apiloom/apiloom/server/controllers/apfbootstrap"
)

// flowControl is API Priority and Fairness as kube-apiserver runs it:
// k8s.io/apiserver's controller, which reads FlowSchemas and
// PriorityLevelConfigurations through this server's loopback and writes
// their status, its filter in the chain where the max-in-flight limit
// would be, and the ensurer of the bootstrap configuration.
// docs/priority-and-fairness.md says more.
type flowControl struct {
	ctl      utilflowcontrol.Interface
	factory  informers.SharedInformerFactory
	ensurer  *apfbootstrap.Ensurer
	estimate fcrequest.WorkEstimatorFunc
}

// apfObjectSize is the average object size APF's size-based LIST
// estimate is given: apiloom's stores count their objects but do not
// track their bytes, and 1,000 bytes makes upstream's formula (a seat
// per 100 kB a LIST holds) a seat per 100 objects, the weight
// withMaxInFlight gives reads.
const apfObjectSize = 1000

// objectCounter says how many objects a resource ("plural.group") holds
// (endpoints' router).
type objectCounter interface {
	ObjectCount(groupResource string) (int, bool)
}

// newFlowControl sets APF up, or returns nil when the server runs the
// max-in-flight limit instead: --enable-priority-and-fairness=false,
// aggregated mode (the host's APF classifies the requests first, and
// its FlowSchemas are not served here), or the flowcontrol kinds left
// out of --builtin-apis. The loopback it reads through is ln's, as the
// server's own controllers use it; nothing runs until start.
func (s *Server) newFlowControl(ln net.Listener, token string, caPEM []byte, resources any) (*flowControl, error) {
	if !s.opts.EnablePriorityAndFairness || s.opts.Aggregated() || !s.servesFlowControl() {
		return nil, nil
	}
	cfg := &rest.Config{
		Host:            "https://" + kubeconfigHost(s.opts.BindAddress, ln),
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: caPEM, Insecure: caPEM == nil},
		QPS:             -1,
		UserAgent:       "apiloom-priority-and-fairness",
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	registerAPFMetrics()
	factory := informers.NewSharedInformerFactory(cs, 0)
	ctl := utilflowcontrol.New(factory, cs.FlowcontrolV1(), s.opts.MaxRequestsInFlight+s.opts.MaxMutatingRequestsInFlight)
	ensurer, err := apfbootstrap.New(cs.FlowcontrolV1(), factory, apfbootstrap.DefaultInterval, s.log)
	if err != nil {
		return nil, err
	}
	stats := func(string) (apiserverstorage.Stats, error) {
		return apiserverstorage.Stats{}, fcrequest.ObjectCountNotFoundErr
	}
	if oc, ok := resources.(objectCounter); ok {
		stats = func(gr string) (apiserverstorage.Stats, error) {
			n, known := oc.ObjectCount(gr)
			if !known {
				return apiserverstorage.Stats{}, fcrequest.ObjectCountNotFoundErr
			}
			return apiserverstorage.Stats{ObjectCount: int64(n), EstimatedAverageObjectSizeBytes: apfObjectSize}, nil
		}
	}
	estimate := fcrequest.NewWorkEstimator(stats, ctl.GetInterestedWatchCount, fcrequest.DefaultWorkEstimatorConfig(), ctl.GetMaxSeats)
	return &flowControl{ctl: ctl, factory: factory, ensurer: ensurer, estimate: estimate}, nil
}

// servesFlowControl reports whether both flowcontrol v1 kinds are served.
func (s *Server) servesFlowControl() bool {
	n := 0
	for _, i := range s.registry.Infos() {
		if i.Group == "flowcontrol.apiserver.k8s.io" && i.Version == "v1" &&
			(i.Plural == "flowschemas" || i.Plural == "prioritylevelconfigurations") {
			n++
		}
	}
	return n == 2
}

var apfMetricsOnce sync.Once

// registerAPFMetrics registers upstream's apiserver_flowcontrol_*
// families in its global registry, which /metrics serves
// (upstreammetrics.go).
func registerAPFMetrics() {
	apfMetricsOnce.Do(fcmetrics.Register)
}

// withConcurrencyLimit is the filter at kube-apiserver's place for it,
// between impersonation and authorization: APF when fc is set, else the
// max-in-flight limit.
func withConcurrencyLimit(fc *flowControl, limits inFlight, reg prometheus.Registerer, next http.Handler) http.Handler {
	if fc == nil {
		return withMaxInFlight(limits, reg, next)
	}
	// The same requests are long-running as for the request timeout and
	// max-in-flight; the filter still admits watches, for their
	// initialization's cost.
	longRunning := func(r *http.Request, _ *apirequest.RequestInfo) bool { return longRunning(r) }
	apf := filters.WithPriorityAndFairness(next, longRunning, fc.ctl, fc.estimate, limits.maxWait)
	// A health check reaches here without a user when it carried no
	// credentials (authentication lets them through); APF cannot classify
	// such a request (upstream answers 500), and kube-apiserver's own
	// probes FlowSchema exempts health checks anyway.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := apirequest.UserFrom(r.Context()); !ok && isOpenPath(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		apf.ServeHTTP(w, r)
	})
}

// install serves the controller's debug dumps,
// /debug/api_priority_and_fairness/dump_{priority_levels,queues,requests},
// which authorization guards as any non-resource path.
func (fc *flowControl) install(m *http.ServeMux) {
	if fc == nil {
		return
	}
	pr := mux.NewPathRecorderMux("apiloom-apf")
	fc.ctl.Install(pr)
	m.Handle("GET /debug/api_priority_and_fairness/", pr)
}

// start runs the informers, the controller and the ensurer until ctx
// ends; wg waits for them. Called once the server serves, since they
// read and write through its loopback.
func (fc *flowControl) start(ctx context.Context, wg *sync.WaitGroup) {
	if fc == nil {
		return
	}
	fc.factory.Start(ctx.Done())
	wg.Add(3)
	go func() { defer wg.Done(); _ = fc.ctl.Run(ctx.Done()) }()
	go func() { defer wg.Done(); fc.ensurer.Run(ctx) }()
	go func() { defer wg.Done(); <-ctx.Done(); fc.factory.Shutdown() }()
}
