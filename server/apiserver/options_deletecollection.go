package apiserver

import (
	"github.com/spf13/pflag"

	"github.com/apiloom/apiloom/server/endpoints/request"
)

// DeleteCollectionOptions bound the work of one deletecollection.
type DeleteCollectionOptions struct {
	// DeleteCollectionWorkers is how many goroutines one deletecollection
	// deletes its objects with (request.Limits.DeleteCollectionWorkers):
	// kube-apiserver's --delete-collection-workers, default 1 as there.
	// The namespace controller deletes a namespace's content one
	// deletecollection per resource, so this is what a larger value
	// speeds up (docs/namespace-deletion.md has the figures); less than 1
	// means 1, as upstream.
	DeleteCollectionWorkers int
}

func defaultDeleteCollectionOptions() DeleteCollectionOptions {
	return DeleteCollectionOptions{DeleteCollectionWorkers: request.DefaultDeleteCollectionWorkers}
}

func (o *Options) addDeleteCollectionFlags(fs *pflag.FlagSet) {
	fs.IntVar(&o.DeleteCollectionWorkers, "delete-collection-workers", o.DeleteCollectionWorkers,
		"Number of workers spawned for DeleteCollection call. These are used to speed up namespace cleanup. "+
			"(kube-apiserver's flag and default; each deletes one object at a time, so a namespace of many objects goes up to this many times as fast while the server has cores and etcd keeps up)")
}
