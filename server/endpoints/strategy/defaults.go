package strategy

// The defaults and server-owned fields of a built-in kind
// (resource.Definition.Default and Prepare), kube-apiserver's decoding
// defaults and registry strategies, reached by every write path: Default
// where the request's object is decoded or a patch's result is (DecodeForm),
// and where an apply's merged object is (ApplyDefaults); Prepare in
// the Prepare stage of a create or an update (write.go), before validation.

// DecodeForm is decodeSchemaForm, then the kind's own defaults on the
// typed object when it decoded. Kinds with a schema have no Default (the
// schema's defaults are theirs), so the form validated is still the
// request's.
func (k *Kind[O]) DecodeForm(content map[string]any, typed O, typedErr error) (O, *Form, error) {
	obj, f, err := k.decodeSchemaForm(content, typed, typedErr)
	if err == nil && (f == nil || f.typedErr == nil) {
		k.kindDefaults(obj)
	}
	return obj, f, err
}

// kindDefaults applies the kind's Default, if it has one, to obj.
func (k *Kind[O]) kindDefaults(obj O) {
	if k.def.Default != nil {
		k.def.Default(obj)
	}
}

// prepareKind applies the kind's Prepare, if it has one, to obj, the
// object a create (old the zero value) or an update of old stores.
func (k *Kind[O]) prepareKind(obj, old O) {
	if k.def.Prepare != nil {
		k.def.Prepare(obj, old)
	}
}
