package strategy

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apiloom/apiloom/server/admission/schemacheck"
	"github.com/apiloom/apiloom/server/hook"
	"github.com/apiloom/apiloom/server/resource"
)

// Kind is what one resource's definition does to its writes. Immutable
// after New and safe for concurrent use.
type Kind[O resource.Object] struct {
	def *resource.Definition[O]
	gvk schema.GroupVersionKind
	gr  schema.GroupResource
	// check defaults and validates writes by the kind's schema; nil when
	// the kind has none.
	check *schemacheck.Check
	// scaleErrors are the violations of an object's scale fields, from its
	// unstructured content (spec: its spec replicas too); nil without a
	// scale subresource.
	scale func(content map[string]any, spec bool) field.ErrorList
	hooks Hooks
}

// Hooks configures the kind's hooks.
type Hooks struct {
	// Readers give the hooks read access to every served kind.
	Readers hook.Readers
	// Timeout bounds each point of a request's hooks
	// (hook.DefaultTimeout when not positive).
	Timeout time.Duration
}

// CallTimeout is the deadline hook.Call gives each point of a request's
// hooks: Timeout, or hook.DefaultTimeout when it is not positive.
func (h Hooks) CallTimeout() time.Duration {
	if h.Timeout <= 0 {
		return hook.DefaultTimeout
	}
	return h.Timeout
}

// Request is what a write's hooks know of it beyond its objects.
type Request struct {
	// Subresource is "" for the main resource, else "status", "scale"
	// or "finalize".
	Subresource string
	DryRun      bool
}

// New returns the strategy of def: check is its schema's (nil for none:
// New builds one from def.Schema), scaleErrors its scale fields' check.
// It panics when def.Schema is invalid and check is nil, a programming
// error that the registry reports as an error at start (registry.Build
// builds every check first).
func New[O resource.Object](def *resource.Definition[O], check *schemacheck.Check, scaleErrors func(map[string]any, bool) field.ErrorList, hooks Hooks) *Kind[O] {
	if check == nil && def.Schema != "" {
		c, err := schemacheck.New(context.Background(), &def.Info)
		if err != nil {
			panic(fmt.Sprintf("strategy: resource %s: %v", def.GroupResource(), err))
		}
		check = c
	}
	return &Kind[O]{def: def, gvk: def.GroupVersionKind(), gr: def.GroupResource(), check: check, scale: scaleErrors, hooks: hooks}
}

// HasSchema reports whether the kind's writes are checked by a schema.
func (k *Kind[O]) HasSchema() bool { return k.check != nil }
