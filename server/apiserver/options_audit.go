package apiserver

import (
	"github.com/spf13/pflag"
	genericoptions "k8s.io/apiserver/pkg/server/options"
)

// defaultAuditOptions are kube-apiserver's: no policy file, so no events;
// the log backend, once --audit-log-path is set, writes JSON in blocking
// mode, the webhook backend batches (a buffer of 10000 events).
func defaultAuditOptions() genericoptions.AuditOptions { return *genericoptions.NewAuditOptions() }

// addAuditFlags adds kube-apiserver's audit flags, k8s.io/apiserver's own
// (--audit-policy-file, --audit-log-*, --audit-webhook-*): the same names,
// defaults and meaning, as they build the same backends (audit.go).
func (o *Options) addAuditFlags(fs *pflag.FlagSet) { o.Audit.AddFlags(fs) }

// validateAudit is upstream's validation of those flags.
func (o *Options) validateAudit() []error { return o.Audit.Validate() }
