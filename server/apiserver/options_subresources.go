package apiserver

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/apiloom/apiloom/server/endpoints"
)

// SubresourceOptions bound the kinds' own subresources
// (resource.Definition.Custom).
type SubresourceOptions struct {
	// MaxSubresourceStreams is how many calls of each stream
	// subresource of each kind run at once; the next is 429 with
	// Retry-After 1 (endpoints.DefaultMaxStreams says why 10,000).
	// kube-apiserver has no such limit: its pods/log streams are bounded
	// only by HTTP/2's streams per connection.
	MaxSubresourceStreams int
}

func defaultSubresourceOptions() SubresourceOptions {
	return SubresourceOptions{MaxSubresourceStreams: endpoints.DefaultMaxStreams}
}

func (o *Options) addSubresourceFlags(fs *pflag.FlagSet) {
	fs.IntVar(&o.MaxSubresourceStreams, "max-subresource-streams", o.MaxSubresourceStreams,
		"how many calls of each stream subresource of each kind (as pods/log, long-running and exempt from the request timeout and in-flight limits) run at once; more are refused with 429 TooManyRequests")
}

func (o *Options) validateSubresources() []error {
	if o.MaxSubresourceStreams <= 0 {
		return []error{errors.New("--max-subresource-streams must be positive")}
	}
	return nil
}
