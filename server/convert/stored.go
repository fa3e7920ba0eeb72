package convert

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/server/resource"
)

// DecodeStored returns data, a value stored as apiVersion, as an object of
// the storage version, with its apiVersion and kind: decoded as the Go type
// of the version it was stored in and converted as every read converts,
// as kube-apiserver decodes stored values by their apiVersion. Values
// written before a kind's storage version changed are stored in the
// former one (storage.WithForeignDecoder). An apiVersion that is not one
// of the kind's versions, or a value that does not decode, is an error.
func (v *Versions) DecodeStored(apiVersion string, data []byte) (resource.Object, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, fmt.Errorf("stored apiVersion %q: %w", apiVersion, err)
	}
	from, ok := v.byGV[gv]
	if !ok {
		return nil, fmt.Errorf("stored apiVersion %q is not a version of %s (its versions: %s)", apiVersion, v.storage.Info.Kind, v.versionList())
	}
	obj := from.New()
	if err := json.Unmarshal(data, obj); err != nil {
		return nil, fmt.Errorf("decode as %s: %w", apiVersion, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(from.Info.GroupVersionKind())
	return v.convert(obj, from, v.storage)
}

// versionList is the kind's versions, for errors.
func (v *Versions) versionList() string {
	names := make([]string, len(v.infos))
	for i, info := range v.infos {
		names[i] = info.GroupVersion().String()
	}
	return strings.Join(names, ", ")
}
