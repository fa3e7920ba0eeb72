package apiserver

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/apiloom/apiloom/server/controllers/resourcequota"
)

// ResourceQuotaOptions tune the resourcequota controller, with
// kube-controller-manager's flags; zero is its default.
type ResourceQuotaOptions struct {
	// ResourceQuotaSyncPeriod is how often every quota's usage is
	// recalculated (5m).
	ResourceQuotaSyncPeriod time.Duration
	// ConcurrentResourceQuotaSyncs is how many quotas are synced at once
	// (5).
	ConcurrentResourceQuotaSyncs int
}

func (o *Options) addResourceQuotaFlags(fs *pflag.FlagSet) {
	def := resourcequota.DefaultConfig()
	if o.ResourceQuotaSyncPeriod == 0 {
		o.ResourceQuotaSyncPeriod = def.SyncPeriod
	}
	if o.ConcurrentResourceQuotaSyncs == 0 {
		o.ConcurrentResourceQuotaSyncs = def.Workers
	}
	fs.DurationVar(&o.ResourceQuotaSyncPeriod, "resource-quota-sync-period", o.ResourceQuotaSyncPeriod,
		"how often the resourcequota controller recalculates every quota's usage (kube-controller-manager's flag)")
	fs.IntVar(&o.ConcurrentResourceQuotaSyncs, "concurrent-resource-quota-syncs", o.ConcurrentResourceQuotaSyncs,
		"how many quotas the resourcequota controller syncs at once (kube-controller-manager's flag)")
}

func (o *Options) validateResourceQuota() []error {
	var errs []error
	if o.ResourceQuotaSyncPeriod < 0 {
		errs = append(errs, fmt.Errorf("--resource-quota-sync-period %s must not be negative", o.ResourceQuotaSyncPeriod))
	}
	if o.ConcurrentResourceQuotaSyncs < 0 {
		errs = append(errs, fmt.Errorf("--concurrent-resource-quota-syncs %d must not be negative", o.ConcurrentResourceQuotaSyncs))
	}
	return errs
}

// resourceQuotaConfig is the controller's configuration, its defaults
// where the options leave zero.
func (o *Options) resourceQuotaConfig() resourcequota.Config {
	cfg := resourcequota.DefaultConfig()
	if o.ResourceQuotaSyncPeriod > 0 {
		cfg.SyncPeriod = o.ResourceQuotaSyncPeriod
	}
	if o.ConcurrentResourceQuotaSyncs > 0 {
		cfg.Workers = o.ConcurrentResourceQuotaSyncs
	}
	return cfg
}
