package apiserver

import (
	"github.com/spf13/pflag"

	"github.com/apiloom/apiloom/server/internal/tracing"
)

// addTracingFlags adds --tracing-config-file, kube-apiserver's flag.
func (o *Options) addTracingFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.TracingConfigFile, "tracing-config-file", o.TracingConfigFile,
		"file with the server's OpenTelemetry tracing configuration, an apiserver.config.k8s.io TracingConfiguration "+
			"(endpoint, default localhost:4317, and samplingRatePerMillion, default 0: only requests whose traceparent is sampled); "+
			"empty: no tracing (docs/tracing.md)")
}

// validateTracing reads and validates the tracing configuration, so that
// a server given a bad one refuses to start and says why.
func (o *Options) validateTracing() []error {
	if o.TracingConfigFile == "" {
		return nil
	}
	if _, err := tracing.Load(o.TracingConfigFile); err != nil {
		return []error{err}
	}
	return nil
}
