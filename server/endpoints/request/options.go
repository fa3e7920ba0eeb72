package request

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion"
	internalvalidation "k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apiloom/apiloom/server/storage"
)

// Query parameters are parsed here by hand rather than through
// apimachinery's reflective parameter codec: the rules are few, the list
// path is hot, and each failure must be the exact Status kube-apiserver
// returns. Unknown parameters are ignored, as upstream does (client-go
// sends timeout=32s on every request).

// List is a parsed list or watch request.
type List struct {
	Options storage.ListOptions
	// Watch is true for ?watch=true (or a true-ish value, as upstream
	// parses booleans).
	Watch bool
	// TimeoutSeconds is ?timeoutSeconds=, nil when absent.
	TimeoutSeconds *int64
}

// SelectableFields are the fields a kind's objects can be selected by.
type SelectableFields struct {
	// Keys are the field-selector keys the kind supports.
	Keys map[string]bool
	// MetadataOnly is true for a built-in kind that selects only by
	// metadata.name and metadata.namespace (a ConfigMap), with
	// apimachinery's default field-label conversion.
	MetadataOnly bool
}

// unknown is the message of a field selector on a field the kind cannot
// select by, as kube-apiserver words it: a custom resource's, and a
// built-in kind's with fields of its own to select by (a Secret's type),
// come from their own field-label conversion; a built-in kind that selects
// only by metadata.name and metadata.namespace (a ConfigMap) has
// apimachinery's default one.
func (s SelectableFields) unknown(field string) string {
	if s.MetadataOnly {
		return fmt.Sprintf("%q is not a known field selector: only %q, %q", field, "metadata.name", "metadata.namespace")
	}
	return "field label not supported: " + field
}

// ParseList reads metav1.ListOptions from q, validates them as
// kube-apiserver does (422 Invalid of kind ListOptions) and checks the
// field selector against the resource's selectable fields. name is the
// object name of a single-object watch path, "" otherwise.
func ParseList(q url.Values, namespace, name string, selectable SelectableFields) (List, error) {
	var lr List
	in := internalversion.ListOptions{
		ResourceVersion:      q.Get("resourceVersion"),
		ResourceVersionMatch: metav1.ResourceVersionMatch(q.Get("resourceVersionMatch")),
		Continue:             q.Get("continue"),
	}
	var err error
	if in.LabelSelector, err = labels.Parse(q.Get("labelSelector")); err != nil {
		return lr, apierrors.NewBadRequest(err.Error())
	}
	if in.FieldSelector, err = fields.ParseSelector(q.Get("fieldSelector")); err != nil {
		return lr, apierrors.NewBadRequest(err.Error())
	}
	in.Watch = QueryBool(q, "watch")
	in.AllowWatchBookmarks = QueryBool(q, "allowWatchBookmarks")
	if q.Has("sendInitialEvents") {
		v := QueryBool(q, "sendInitialEvents")
		in.SendInitialEvents = &v
	}
	if in.TimeoutSeconds, err = queryInt64(q, "timeoutSeconds"); err != nil {
		return lr, err
	}
	limit, err := queryInt64(q, "limit")
	if err != nil {
		return lr, err
	}
	if limit != nil && *limit > 0 {
		in.Limit = *limit
	}

	// Watch-list is on, so a legacy watch from ""/"0" is a watch-list
	// without the bookmark unless bookmarks are allowed, as upstream.
	internalversion.SetListOptionsDefaults(&in, true)
	if errs := internalvalidation.ValidateListOptions(&in, true); len(errs) > 0 {
		return lr, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	if in.Continue != "" && in.ResourceVersion != "" && in.ResourceVersion != "0" {
		return lr, apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
	}
	for _, req := range in.FieldSelector.Requirements() {
		if !selectable.Keys[req.Field] {
			return lr, apierrors.NewBadRequest(selectable.unknown(req.Field))
		}
	}
	if name != "" {
		// A watch on .../{name}: the name is a metadata.name selector, and a
		// selector the client sent must agree with it.
		if !in.FieldSelector.Empty() {
			if selected, ok := in.FieldSelector.RequiresExactMatch("metadata.name"); !ok || selected != name {
				return lr, apierrors.NewBadRequest("fieldSelector metadata.name doesn't match requested name")
			}
		} else {
			in.FieldSelector = fields.OneTermEqualSelector("metadata.name", name)
		}
	}

	lr.Watch = in.Watch
	lr.TimeoutSeconds = in.TimeoutSeconds
	lr.Options = storage.ListOptions{
		Namespace:            namespace,
		ResourceVersion:      in.ResourceVersion,
		ResourceVersionMatch: in.ResourceVersionMatch,
		Limit:                in.Limit,
		Continue:             in.Continue,
		SendInitialEvents:    in.SendInitialEvents,
		AllowBookmarks:       in.AllowWatchBookmarks,
	}
	if !in.LabelSelector.Empty() {
		lr.Options.Predicate.Label = in.LabelSelector
	}
	if !in.FieldSelector.Empty() {
		lr.Options.Predicate.Field = in.FieldSelector
	}
	return lr, nil
}

// WriteOptions are the query parameters of create, update and patch.
type WriteOptions struct {
	DryRun bool
	// FieldValidation is Strict, Warn or Ignore; Warn when unset, as
	// kube-apiserver defaults it.
	FieldValidation string
	// FieldManager names the writer in the object's managed fields; when
	// empty, the User-Agent does (server/endpoints' managerName). Required
	// for apply.
	FieldManager string
	// Force makes an apply take over the fields other managers own rather
	// than fail with a conflict; only apply may set it.
	Force bool
}

// Strict reports whether the body must be decoded strictly.
func (o WriteOptions) Strict() bool { return o.FieldValidation != metav1.FieldValidationIgnore }

// ParseCreateOptions reads and validates metav1.CreateOptions (422 Invalid
// of kind CreateOptions).
func ParseCreateOptions(q url.Values) (WriteOptions, error) {
	opts := metav1.CreateOptions{DryRun: q["dryRun"], FieldManager: q.Get("fieldManager"), FieldValidation: q.Get("fieldValidation")}
	if errs := metav1validation.ValidateCreateOptions(&opts); len(errs) > 0 {
		return WriteOptions{}, InvalidOptions("CreateOptions", errs)
	}
	return newWriteOptions(opts.DryRun, opts.FieldValidation, opts.FieldManager), nil
}

// ParseUpdateOptions reads and validates metav1.UpdateOptions.
func ParseUpdateOptions(q url.Values) (WriteOptions, error) {
	opts := metav1.UpdateOptions{DryRun: q["dryRun"], FieldManager: q.Get("fieldManager"), FieldValidation: q.Get("fieldValidation")}
	if errs := metav1validation.ValidateUpdateOptions(&opts); len(errs) > 0 {
		return WriteOptions{}, InvalidOptions("UpdateOptions", errs)
	}
	return newWriteOptions(opts.DryRun, opts.FieldValidation, opts.FieldManager), nil
}

// ParsePatchOptions reads and validates metav1.PatchOptions for a patch of
// type pt.
func ParsePatchOptions(q url.Values, pt string) (WriteOptions, error) {
	opts := metav1.PatchOptions{DryRun: q["dryRun"], FieldManager: q.Get("fieldManager"), FieldValidation: q.Get("fieldValidation")}
	if q.Has("force") {
		f := QueryBool(q, "force")
		opts.Force = &f
	}
	if errs := metav1validation.ValidatePatchOptions(&opts, types.PatchType(pt)); len(errs) > 0 {
		return WriteOptions{}, InvalidOptions("PatchOptions", errs)
	}
	wo := newWriteOptions(opts.DryRun, opts.FieldValidation, opts.FieldManager)
	wo.Force = opts.Force != nil && *opts.Force
	return wo, nil
}

func newWriteOptions(dryRun []string, fieldValidation, fieldManager string) WriteOptions {
	if fieldValidation == "" {
		fieldValidation = metav1.FieldValidationWarn
	}
	// Validation has allowed only "All" as a dryRun value.
	return WriteOptions{DryRun: len(dryRun) > 0, FieldValidation: fieldValidation, FieldManager: fieldManager}
}

// DeleteQueryOptions reads metav1.DeleteOptions from q, for a delete
// without a body.
func DeleteQueryOptions(q url.Values) (metav1.DeleteOptions, error) {
	opts := metav1.DeleteOptions{DryRun: q["dryRun"]}
	var err error
	if opts.GracePeriodSeconds, err = queryInt64(q, "gracePeriodSeconds"); err != nil {
		return opts, err
	}
	if q.Has("orphanDependents") {
		v := QueryBool(q, "orphanDependents")
		opts.OrphanDependents = &v //nolint:staticcheck // still part of the API
	}
	if q.Has("propagationPolicy") {
		p := metav1.DeletionPropagation(q.Get("propagationPolicy"))
		opts.PropagationPolicy = &p
	}
	if q.Has("ignoreStoreReadErrorWithClusterBreakingPotential") {
		v := QueryBool(q, "ignoreStoreReadErrorWithClusterBreakingPotential")
		opts.IgnoreStoreReadErrorWithClusterBreakingPotential = &v
	}
	return opts, nil
}

// ValidateDeleteOptions is kube-apiserver's check of DeleteOptions (422
// Invalid of kind DeleteOptions): propagation policy values, orphan and
// policy together, dryRun values, and that the unsafe delete's
// ignoreStoreReadErrorWithClusterBreakingPotential comes without
// preconditions, propagation policy, orphanDependents or grace period,
// which it could not honour. The option is offered, as kube-apiserver
// v1.37 offers it by default (feature AllowUnsafeMalformedObjectDeletion,
// beta and on since 1.37).
func ValidateDeleteOptions(opts *metav1.DeleteOptions) error {
	if errs := metav1validation.ValidateDeleteOptions(opts); len(errs) > 0 {
		return InvalidOptions("DeleteOptions", errs)
	}
	return nil
}

// TableOptions reads metav1.TableOptions, the includeObject parameter of a
// Table request (400 for bad values, as upstream).
func TableOptions(q url.Values) (metav1.TableOptions, error) {
	opts := metav1.TableOptions{IncludeObject: metav1.IncludeObjectPolicy(q.Get("includeObject"))}
	switch errs := metav1validation.ValidateTableOptions(&opts); len(errs) {
	case 0:
		return opts, nil
	case 1:
		return opts, apierrors.NewBadRequest(fmt.Sprintf("Unable to convert to Table as requested: %v", errs[0].Error()))
	default:
		return opts, apierrors.NewBadRequest(fmt.Sprintf("Unable to convert to Table as requested: %v", errs))
	}
}

// InvalidOptions is the 422 Invalid of the options of kind (CreateOptions,
// DeleteOptions, ...) with errs.
func InvalidOptions(kind string, errs field.ErrorList) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, "", errs)
}

// QueryBool parses a boolean parameter as apimachinery does: absent is
// false, "0" and "false" (any case) are false, anything else is true.
func QueryBool(q url.Values, key string) bool {
	vs, ok := q[key]
	if !ok || len(vs) == 0 {
		return false
	}
	return vs[0] != "0" && !strings.EqualFold(vs[0], "false")
}

// queryInt64 parses an integer parameter; nil when absent, 400 when not
// an integer.
func queryInt64(q url.Values, key string) (*int64, error) {
	vs, ok := q[key]
	if !ok || len(vs) == 0 {
		return nil, nil
	}
	n, err := strconv.ParseInt(vs[0], 10, 64)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return &n, nil
}
