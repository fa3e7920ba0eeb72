package apiserver

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/component-base/metrics/legacyregistry"
)

// upstreamPrefixes are the metric families that k8s.io/apiserver's own
// admission plugins and chain record in its global registry (the
// webhooks', the policies', each plugin's and each phase's durations),
// its encryption at rest (values transformed, KMS v2) and its audit
// package and backends (events, errors, levels, drops):
// /metrics serves them as kube-apiserver does.
var upstreamPrefixes = []string{
	"apiserver_admission_",
	"apiserver_validating_admission_policy_",
	"apiserver_mutating_admission_policy_",
	// Encryption at rest (encryption.go): the transformers', KMS v2's
	// and the reload controller's.
	"apiserver_storage_transformation_",
	"apiserver_storage_envelope_transformation_",
	"apiserver_storage_data_key_generation_",
	"apiserver_envelope_encryption_",
	"apiserver_encryption_config_controller_",
	"apiserver_audit_",
	// Authorization (authzconfig): decisions, webhooks, match conditions, reloads.
	"apiserver_authorization_",
	// API Priority and Fairness (apf.go).
	"apiserver_flowcontrol_",
	// JWT authenticators (tokenauthn.go): latency, JWKS fetches.
	"apiserver_authentication_jwt_authenticator_",
}

// upstreamMetrics gathers those families only: the global registry holds
// Go and process collectors too, which the server's own registry has.
type upstreamMetrics struct{}

func (upstreamMetrics) Gather() ([]*dto.MetricFamily, error) {
	all, err := legacyregistry.DefaultGatherer.Gather()
	out := all[:0]
	for _, mf := range all {
		for _, p := range upstreamPrefixes {
			if strings.HasPrefix(mf.GetName(), p) {
				out = append(out, mf)
				break
			}
		}
	}
	return out, err
}

// metricsGatherer is what /metrics serves: the server's registry and
// upstream's admission metrics.
func metricsGatherer(own prometheus.Gatherer) prometheus.Gatherer {
	return prometheus.Gatherers{own, upstreamMetrics{}}
}
