package endpoints

// The defaults and server-owned fields of a built-in kind
// (resource.Definition.Default and Prepare), kube-apiserver's decoding
// defaults and registry strategies, reached by every write path: Default
// where the request's object is decoded or a patch's result is (decodeForm),
// and where an apply's merged object is (applyDefaults); Prepare in
// prepareCreate and prepareUpdate, before validation.

// decodeForm is decodeSchemaForm, then the kind's own defaults on the
// typed object when it decoded. Kinds with a schema have no Default (the
// schema's defaults are theirs), so the form validated is still the
// request's.
func (h *handler[O]) decodeForm(content map[string]any, typed O, typedErr error) (O, *form, error) {
	obj, f, err := h.decodeSchemaForm(content, typed, typedErr)
	if err == nil && (f == nil || f.typedErr == nil) {
		h.kindDefaults(obj)
	}
	return obj, f, err
}

// kindDefaults applies the kind's Default, if it has one, to obj.
func (h *handler[O]) kindDefaults(obj O) {
	if h.def.Default != nil {
		h.def.Default(obj)
	}
}

// prepareKind applies the kind's Prepare, if it has one, to obj, the
// object a create (old the zero value) or an update of old stores.
func (h *handler[O]) prepareKind(obj, old O) {
	if h.def.Prepare != nil {
		h.def.Prepare(obj, old)
	}
}
