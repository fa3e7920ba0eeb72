package endpoints

import (
	"time"

	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/apiloom/apiloom/server/admission"
	"github.com/apiloom/apiloom/server/admission/schemacheck"
	"github.com/apiloom/apiloom/server/endpoints/fieldmanager"
	"github.com/apiloom/apiloom/server/endpoints/patch"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/endpoints/strategy"
	"github.com/apiloom/apiloom/server/hook"
)

// Option configures a resource's handler.
type Option func(*handlerConfig)

// handlerConfig is what Options set.
type handlerConfig struct {
	limits        request.Limits
	schemas       *patch.Schemas
	typeConverter managedfields.TypeConverter
	schemaCheck   *schemacheck.Check
	versions      fieldmanager.KindVersions
	hooks         strategy.Hooks
	// admission is WithAdmission's; nil for the kind's stages alone.
	admission *admission.Chain
	// authorizer is WithAuthorizer's; nil for none.
	authorizer authorizer.Authorizer
	// writers are WithWriters'; nil for none.
	writers *Writers
	// maxStreams is WithMaxStreams'; DefaultMaxStreams when not positive.
	maxStreams int
}

// WithLimits sets the resource's limits (default request.DefaultLimits()).
func WithLimits(l request.Limits) Option { return func(c *handlerConfig) { c.limits = l } }

// WithSchemaCheck sets the check that defaults and validates the
// resource's writes, built by schemacheck.New from the resource's Schema.
// Without it, NewResource builds one itself (and panics on an invalid
// schema); the server builds them first, to report an invalid schema as an
// error at start.
func WithSchemaCheck(c *schemacheck.Check) Option {
	return func(cfg *handlerConfig) { cfg.schemaCheck = c }
}

// WithTypeConverter sets how the resource's objects are seen by the field
// manager that keeps their managed fields and merges server-side applies:
// tc must know the resource's kind. The server passes the one it builds
// from the OpenAPI schemas of all its kinds (registry), so lists and maps
// merge as their +listType and +mapType markers say. Without this option
// the resource is treated as kube-apiserver treats a CustomResourceDefinition
// without a schema: structs and maps merge field by field and every list is
// atomic (managedfields.NewDeducedTypeConverter).
func WithTypeConverter(tc managedfields.TypeConverter) Option {
	return func(c *handlerConfig) { c.typeConverter = tc }
}

// WithAuthorizer sets the authorizer of what a request needs beyond its
// own verb, which the server's filter authorized: the unsafe delete's
// unsafe-delete-ignore-read-errors (unsafedelete.go). Without one, the
// unsafe delete is refused with 500, as kube-apiserver refuses it.
func WithAuthorizer(a authorizer.Authorizer) Option {
	return func(c *handlerConfig) { c.authorizer = a }
}

// WithHooks gives the resource's hooks read access to every served kind
// through readers and bounds each point of a request's hooks by timeout
// (hook.DefaultTimeout when not positive).
func WithHooks(readers hook.Readers, timeout time.Duration) Option {
	return func(c *handlerConfig) { c.hooks = strategy.Hooks{Readers: readers, Timeout: timeout} }
}

// WithWriters makes the resource one that actions write through ws, and
// gives its actions ws as their writers (hook.Writers): every resource of
// a server shares one.
func WithWriters(ws *Writers) Option { return func(c *handlerConfig) { c.writers = ws } }

// WithMaxStreams bounds how many calls of each of the kind's stream
// subresources run at once (DefaultMaxStreams when not positive); the
// next is 429 TooManyRequests.
func WithMaxStreams(n int) Option { return func(c *handlerConfig) { c.maxStreams = n } }
