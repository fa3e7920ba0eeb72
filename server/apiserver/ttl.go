package apiserver

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ttls are the time-to-live overrides of the flags, by resource: core
// events live --event-ttl (events.k8s.io/v1 Events are the same objects,
// in the same store), whatever builtin/apis.yaml says.
func (o *Options) ttls() map[schema.GroupResource]time.Duration {
	return map[schema.GroupResource]time.Duration{{Group: "", Resource: "events"}: o.EventTTL}
}
