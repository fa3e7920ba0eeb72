package gc

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/server/resource"
)

// errUnknownKind is a reference to a kind this server does not serve (in
// that version): its owner cannot be looked up, and the dependent waits,
// retried, as upstream's collector waits for a REST mapping.
var errUnknownKind = errors.New("gc: kind not served")

// ignored are the resources never watched, as upstream ignores them:
// events are many, short-lived, and own nothing.
var ignored = map[schema.GroupResource]bool{
	{Group: "", Resource: "events"}:              true,
	{Group: "events.k8s.io", Resource: "events"}: true,
}

// kinds maps the apiVersion and kind of a reference to the resource that
// serves them.
type kinds map[schema.GroupVersionKind]*resource.Info

func newKinds(infos []*resource.Info) kinds {
	k := make(kinds, len(infos))
	for _, i := range infos {
		k[i.GroupVersionKind()] = i
	}
	return k
}

// lookup is the resource serving kind in apiVersion.
func (k kinds) lookup(apiVersion, kind string) (*resource.Info, error) {
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
	if i, ok := k[gvk]; ok {
		return i, nil
	}
	return nil, fmt.Errorf("%w: %s, Kind=%s", errUnknownKind, apiVersion, kind)
}

// monitored is the resources the graph is built from: every served
// resource but the ignored, in one version each (the one objects are
// stored in), since every version of a kind has the same objects.
func monitored(infos []*resource.Info) []*resource.Info {
	var out []*resource.Info
	seen := map[schema.GroupResource]bool{}
	for _, i := range infos {
		gr := i.GroupResource()
		if ignored[gr] || seen[gr] || !i.Stored() {
			continue
		}
		seen[gr] = true
		out = append(out, i)
	}
	return out
}
