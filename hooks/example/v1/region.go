package v1

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/server/hook"
)

// Region holds the hooks of Region: one still in use stays.
type Region struct{}

// ValidateDelete refuses to delete a Region that a Database names in
// spec.region, naming one such Database. The Databases are read
// consistently: a refusal must not rest on a Database whose delete has
// already returned (the cache as it is may still hold it, and
// `helm uninstall`, which deletes a chart's Database and then its Region,
// would fail). It costs the delete one etcd round trip.
func (Region) ValidateDelete(req *hook.Request, region *examplev1.Region) (hook.Warnings, field.ErrorList) {
	dbs, err := hook.List[*examplev1.Database](req, "", nil, hook.Consistent())
	if err != nil {
		return nil, field.ErrorList{field.InternalError(field.NewPath("metadata", "name"), err)}
	}
	for _, db := range dbs {
		if db.Spec.Region == region.Name {
			return nil, field.ErrorList{field.Forbidden(field.NewPath("metadata", "name"),
				fmt.Sprintf("Region %s is used by Database %s/%s (spec.region); delete the Databases in it first", region.Name, db.Namespace, db.Name))}
		}
	}
	return nil, nil
}
