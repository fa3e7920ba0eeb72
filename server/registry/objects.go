package registry

import (
	"errors"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8sadmission "k8s.io/apiserver/pkg/admission"

	"github.com/apiloom/apiloom/server/convert"
	"github.com/apiloom/apiloom/server/resource"
)

// ObjectInterfaces are the served kinds as k8s.io/apiserver's admission
// plugins handle them (admission.ObjectInterfaces): the policies and
// webhooks create, convert and default objects of any served version,
// and match a rule written for one version of a resource to a request
// through another (matchPolicy Equivalent). kube-apiserver gives them
// its scheme and its equivalent-resource registry; apiloom has no scheme
// of every kind, so these are built from the registry: a runtime.Scheme
// of the served Go types for creating and typing, the kinds' own
// conversions (convert.Versions) and defaults.
func (r *Registry) ObjectInterfaces() (k8sadmission.ObjectInterfaces, error) {
	versions, err := r.versions()
	if err != nil {
		return nil, err
	}
	o := &objects{
		scheme:      runtime.NewScheme(),
		versions:    map[schema.GroupKind]*convert.Versions{},
		defaults:    map[reflect.Type]func(resource.Object){},
		storedKinds: map[schema.GroupVersionKind]schema.GroupKind{},
	}
	o.equivalents = runtime.NewEquivalentResourceRegistryWithIdentity(func(gr schema.GroupResource) string {
		return o.identity[gr]
	})
	o.identity = map[schema.GroupResource]string{}
	for _, e := range r.entries {
		gvk := e.Info.GroupVersionKind()
		o.scheme.AddKnownTypeWithName(gvk, e.version.New())
		stored := storedKind(e.Info)
		o.versions[stored] = versions[stored]
		o.storedKinds[gvk] = stored
		if e.defaults != nil {
			o.defaults[reflect.TypeOf(e.version.New())] = e.defaults
		}
		storage := e.Info
		if e.storedAs != nil {
			storage = e.storedAs
		}
		// Resources stored as one are equivalent (events.k8s.io/v1
		// events and core/v1 events), as kube-apiserver keys them by
		// their storage.
		o.identity[e.Info.GroupResource()] = storage.GroupResource().String()
		gvr := e.Info.GroupVersionResource()
		o.equivalents.RegisterKindFor(gvr, "", gvk)
		if e.Info.HasStatus {
			o.equivalents.RegisterKindFor(gvr, "status", gvk)
		}
		if e.Info.Scale != nil {
			o.equivalents.RegisterKindFor(gvr, "scale", schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"})
		}
		if e.Info.HasFinalize {
			o.equivalents.RegisterKindFor(gvr, "finalize", gvk)
		}
	}
	return o, nil
}

// objects implements admission.ObjectInterfaces and the runtime
// interfaces it returns.
type objects struct {
	scheme      *runtime.Scheme
	versions    map[schema.GroupKind]*convert.Versions
	storedKinds map[schema.GroupVersionKind]schema.GroupKind
	defaults    map[reflect.Type]func(resource.Object)
	identity    map[schema.GroupResource]string
	equivalents runtime.EquivalentResourceRegistry
}

var (
	_ k8sadmission.ObjectInterfaces = (*objects)(nil)
	_ runtime.ObjectConvertor       = (*objects)(nil)
	_ runtime.ObjectDefaulter       = (*objects)(nil)
)

func (o *objects) GetObjectCreater() runtime.ObjectCreater     { return o.scheme }
func (o *objects) GetObjectTyper() runtime.ObjectTyper         { return o.scheme }
func (o *objects) GetObjectDefaulter() runtime.ObjectDefaulter { return o }
func (o *objects) GetObjectConvertor() runtime.ObjectConvertor { return o }
func (o *objects) GetEquivalentResourceMapper() runtime.EquivalentResourceMapper {
	return o.equivalents
}

// Default sets the defaults of a built-in kind (resource.Definition's
// Default) on obj, as kube-apiserver defaults what a mutating webhook
// returned; a kind of apis/ gets its schema's defaults later, when the
// write's strategy prepares it.
func (o *objects) Default(obj runtime.Object) {
	if d, ok := o.defaults[reflect.TypeOf(obj)]; ok {
		if r, ok := obj.(resource.Object); ok {
			d(r)
		}
	}
}

// errNotServed is wrapped when an object is of no served kind.
var errNotServed = errors.New("registry: not a served kind")

// kindOf is obj's served kind: what its apiVersion and kind say, or else
// what its Go type is registered as.
func (o *objects) kindOf(obj runtime.Object) (schema.GroupVersionKind, error) {
	if gvk := obj.GetObjectKind().GroupVersionKind(); !gvk.Empty() {
		if _, ok := o.storedKinds[gvk]; ok {
			return gvk, nil
		}
	}
	kinds, _, err := o.scheme.ObjectKinds(obj)
	if err != nil || len(kinds) == 0 {
		return schema.GroupVersionKind{}, fmt.Errorf("%w: %T", errNotServed, obj)
	}
	return kinds[0], nil
}

// withKind is obj with apiVersion and kind set to gvk: obj itself when it
// has them, else a shallow copy (obj may be shared and must not change).
func withKind(obj runtime.Object, gvk schema.GroupVersionKind) runtime.Object {
	if obj.GetObjectKind().GroupVersionKind() == gvk {
		return obj
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer {
		return obj
	}
	c := reflect.New(v.Elem().Type())
	c.Elem().Set(v.Elem())
	out := c.Interface().(runtime.Object)
	out.GetObjectKind().SetGroupVersionKind(gvk)
	return out
}

// ConvertToVersion converts in, an object of a served kind, to the
// version target names, through the kind's storage version.
func (o *objects) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	gvk, err := o.kindOf(in)
	if err != nil {
		return nil, err
	}
	return o.versions[o.storedKinds[gvk]].ConvertToVersion(withKind(in, gvk), target)
}

// UnsafeConvertToVersion is ConvertToVersion: its results never alias in
// in a way callers could observe as more than ConvertToVersion's.
func (o *objects) UnsafeConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	return o.ConvertToVersion(in, target)
}

// Convert sets out, an object of a served version, to in converted to
// it: a copy when both are of one Go type, as the webhooks use it to put
// a patched object back in place of the request's.
func (o *objects) Convert(in, out, _ any) error {
	inObj, ok1 := in.(runtime.Object)
	outObj, ok2 := out.(runtime.Object)
	if !ok1 || !ok2 {
		return fmt.Errorf("%w: %T to %T", errNotServed, in, out)
	}
	outV := reflect.ValueOf(out)
	if outV.Kind() != reflect.Pointer || outV.IsNil() {
		return fmt.Errorf("%w: %T is not a pointer", errNotServed, out)
	}
	if reflect.TypeOf(in) == reflect.TypeOf(out) {
		outV.Elem().Set(reflect.ValueOf(in).Elem())
		return nil
	}
	to, err := o.kindOf(outObj)
	if err != nil {
		return err
	}
	converted, err := o.ConvertToVersion(inObj, to.GroupVersion())
	if err != nil {
		return err
	}
	if reflect.TypeOf(converted) != reflect.TypeOf(out) {
		return fmt.Errorf("%w: %T converted to %T, not %T", errNotServed, in, converted, out)
	}
	outV.Elem().Set(reflect.ValueOf(converted).Elem())
	return nil
}

// ConvertFieldLabel is not asked by admission.
func (o *objects) ConvertFieldLabel(gvk schema.GroupVersionKind, label, _ string) (string, string, error) {
	return "", "", fmt.Errorf("%w: field label %q of %s", errNotServed, label, gvk)
}

// RESTMapper maps the served kinds to their resources and back, as a
// discovery-backed mapper of kube-apiserver's would: the policies find
// the resource of a paramKind through it. A kind's storage version is its
// preferred one.
func (r *Registry) RESTMapper() meta.RESTMapper {
	var gvs []schema.GroupVersion
	seen := map[schema.GroupVersion]bool{}
	add := func(gv schema.GroupVersion) {
		if !seen[gv] {
			seen[gv] = true
			gvs = append(gvs, gv)
		}
	}
	for _, stored := range []bool{true, false} {
		for _, e := range r.entries {
			if (e.storedAs == nil) == stored {
				add(e.Info.GroupVersion())
			}
		}
	}
	m := meta.NewDefaultRESTMapper(gvs)
	for _, e := range r.entries {
		scope := meta.RESTScopeRoot
		if e.Info.Namespaced {
			scope = meta.RESTScopeNamespace
		}
		gv := e.Info.GroupVersion()
		m.AddSpecific(e.Info.GroupVersionKind(), gv.WithResource(e.Info.Plural), gv.WithResource(e.Info.Singular), scope)
	}
	return m
}
