package cache

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are one cache's series. Caches of different resources share the
// vectors of one registerer and differ by the "resource" label.
type metrics struct {
	watchers   prometheus.Gauge
	dispatched prometheus.Counter
	expired    prometheus.Counter
	lag        prometheus.Gauge
	relists    prometheus.Counter
	corrupt    prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer, resource string) (*metrics, error) {
	labels := []string{"resource"}
	watchers, err := register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "apiloom", Subsystem: "watch_cache", Name: "watchers",
		Help: "Open watches served by the watch cache.",
	}, labels))
	if err != nil {
		return nil, err
	}
	dispatched, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "apiloom", Subsystem: "watch_cache", Name: "events_dispatched_total",
		Help: "Events handed to watchers, counted once per watcher that got them.",
	}, labels))
	if err != nil {
		return nil, err
	}
	expired, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "apiloom", Subsystem: "watch_cache", Name: "watchers_expired_total",
		Help: "Watchers ended with 410 Expired because events they still needed left the cache: they fell behind the event window, or the cache relisted.",
	}, labels))
	if err != nil {
		return nil, err
	}
	lag, err := register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "apiloom", Subsystem: "watch_cache", Name: "revision_lag",
		Help: "Revisions etcd was ahead of the watch cache at the last consistent read.",
	}, labels))
	if err != nil {
		return nil, err
	}
	relists, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "apiloom", Subsystem: "watch_cache", Name: "relists_total",
		Help: "Times the watch cache relisted because its etcd watch could not resume.",
	}, labels))
	if err != nil {
		return nil, err
	}
	corrupt, err := register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "apiloom", Subsystem: "watch_cache", Name: "corrupt_objects",
		Help: "Objects whose stored value does not decode, as the watch cache currently knows them. They are left out of lists and watches; " +
			"the log names each, and DELETE with ignoreStoreReadErrorWithClusterBreakingPotential removes them.",
	}, labels))
	if err != nil {
		return nil, err
	}
	return &metrics{
		corrupt:    corrupt.WithLabelValues(resource),
		watchers:   watchers.WithLabelValues(resource),
		dispatched: dispatched.WithLabelValues(resource),
		expired:    expired.WithLabelValues(resource),
		lag:        lag.WithLabelValues(resource),
		relists:    relists.WithLabelValues(resource),
	}, nil
}

// register registers c with reg, or returns the equal collector another
// cache registered first. A nil reg registers nothing.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if reg == nil {
		return c, nil
	}
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing, nil
			}
		}
		return c, err
	}
	return c, nil
}
