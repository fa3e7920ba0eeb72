package discovery

import "errors"

var (
	// ErrInvalidResource is returned by New when a resource.Info cannot be
	// served: a missing name, group or version, or a plural or kind that
	// another resource of the same group-version already uses.
	ErrInvalidResource = errors.New("discovery: invalid resource")
	// ErrMissingDefinition is returned by New when the OpenAPI definitions
	// lack a type a resource needs (its kind, its list kind, or a meta type
	// an operation refers to), so the OpenAPI documents cannot be built.
	ErrMissingDefinition = errors.New("discovery: missing OpenAPI definition")
)
