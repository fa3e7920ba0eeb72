package endpoints

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/apiloom/apiloom/server/endpoints/fieldmanager"
	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
	"github.com/apiloom/apiloom/server/endpoints/storageerr"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// apply serves PATCH with application/apply-patch+yaml: server-side apply.
// The body is the configuration a manager (fieldManager, required: 422
// without it) wants, in YAML or JSON. The field manager merges it into the
// stored object as structured-merge-diff merges (lists and maps as the
// kind's schema says), records the manager as owning exactly the fields it
// applied, and refuses with 409 Conflict, one cause per field, to change a
// field another manager owns unless force=true. The result is then stored
// as an update (or, when the object does not exist, created: 201), with the
// same metadata rules, defaults and validation as every write. Through
// /status only the status is taken, and a missing object is 404.
//
// Bad input is answered as kube-apiserver answers it and stores nothing:
// a body that is not YAML or JSON, or not an object, is 400; an apiVersion
// or kind other than the resource's is 400 ("invalid object type"), as
// are metadata.managedFields in the body and a name or namespace other than
// the URL's; a field the kind's schema does not declare, or a value of the
// wrong type, is a 500 without a reason, exactly as upstream. fieldValidation
// decides only about duplicate fields (Strict: 400; Warn, the default:
// warnings); unknown fields never merge.
func (h *handler[O]) apply(w http.ResponseWriter, r *http.Request, rt route, out negotiation.Output, opts request.WriteOptions, body []byte) error {
	a := &applier[O]{fm: h.managed.For(managedSubresource(rt)), body: body, opts: opts}
	ctx := r.Context()
	for {
		result, err := h.guaranteedUpdate(ctx, rt, opts.DryRun, func(current O) (O, error) {
			var zero O
			obj, err := a.applyTo(current)
			if err != nil {
				return zero, err
			}
			if err := h.checkName(obj, rt); err != nil {
				return zero, err
			}
			obj, f, err := h.kind.ApplyForm(a.config, obj, current, false)
			if err != nil {
				return zero, err
			}
			return h.prepareWrite(ctx, obj, current, f, rt)
		})
		if rt.status || !apierrors.IsNotFound(err) {
			if err != nil {
				// As kube-apiserver, which records warnings as it goes: a
				// refusal after the merge still carries them.
				responsewriters.WriteWarnings(w, a.warnings)
				return err
			}
			return h.writeObject(w, r, out, http.StatusOK, result, a.warnings)
		}
		created, err := h.applyCreate(ctx, rt, a)
		if errors.Is(err, storage.ErrExists) {
			continue // created meanwhile: apply to it
		}
		if err != nil {
			responsewriters.WriteWarnings(w, a.warnings)
			return storageerr.Status(err, h.gr, rt.name, storageerr.Other)
		}
		return h.writeObject(w, r, out, http.StatusCreated, created, a.warnings)
	}
}

// applyCreate creates the object an apply to a missing object makes: the
// configuration merged into an empty object, then prepared as any create
// (system fields, status cleared, defaults, validation). A uid in the
// configuration is 409, as no object has it. It returns storage's
// ErrExists when the object was created meanwhile.
func (h *handler[O]) applyCreate(ctx context.Context, rt route, a *applier[O]) (O, error) {
	var zero O
	obj, err := a.applyTo(h.newObject())
	if err != nil {
		return zero, err
	}
	if uid := obj.GetUID(); uid != "" {
		return zero, apierrors.NewConflict(h.gr, rt.name, fmt.Errorf("uid mismatch: the provided object specified uid %s, and no existing object was found", uid))
	}
	if err := h.kind.EnsureNamespace(obj, rt.namespace); err != nil {
		return zero, err
	}
	if err := h.checkName(obj, rt); err != nil {
		return zero, err
	}
	obj, f, err := h.kind.ApplyForm(a.config, obj, zero, true)
	if err != nil {
		return zero, err
	}
	if err := h.prepareCreate(ctx, obj, f, rt.namespace, time.Now()); err != nil {
		return zero, err
	}
	return h.storage(a.opts.DryRun).Create(ctx, h.key(rt), obj)
}

// applier is one apply request: a manager's configuration, merged into
// whatever object each attempt starts from.
type applier[O resource.Object] struct {
	fm   *managedfields.FieldManager
	body []byte
	opts request.WriteOptions
	// config is the configuration as the last attempt decoded it, what
	// the request wrote (applyForm).
	config map[string]any
	// warnings are those of the last attempt, the one that counts.
	warnings []string
}

// applyTo merges the configuration into current (a new, empty object for
// a create) and returns the result, with its managed fields. Like
// kube-apiserver, it decodes the body afresh for each attempt, and checks
// it for duplicate fields only once the merge succeeded.
func (a *applier[O]) applyTo(current O) (O, error) {
	var zero O
	patch := &unstructured.Unstructured{Object: map[string]any{}}
	if err := utilyaml.Unmarshal(a.body, &patch.Object); err != nil {
		return zero, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
	}
	merged, err := a.fm.Apply(current, patch, a.opts.FieldManager, a.opts.Force)
	if err != nil {
		return zero, applyError(err)
	}
	a.config = patch.Object
	a.warnings = nil
	if a.opts.FieldValidation != metav1.FieldValidationIgnore {
		if err := utilyaml.UnmarshalStrict(a.body, &map[string]any{}); err != nil {
			if a.opts.FieldValidation == metav1.FieldValidationStrict {
				return zero, apierrors.NewBadRequest(fmt.Sprintf("error strict decoding patch: %v", err))
			}
			a.warnings = yamlWarnings(err.Error())
		}
	}
	obj, ok := merged.(O)
	if !ok {
		return zero, fmt.Errorf("%w: apply produced %T", fieldmanager.ErrNotConvertible, merged)
	}
	return obj, nil
}

// applyError is the API error for what the field manager's Apply returned:
// its API errors (409 conflicts, 400 bad configurations) as they are, and
// anything else, such as a field the schema does not declare, as
// kube-apiserver answers an error that is not an API error: 500 with the
// error as the message and no reason.
func applyError(err error) error {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return err
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusInternalServerError,
		Message: err.Error(),
	}}
}

// Prefixes of the YAML decoder's strict errors, which list one problem a
// line.
const (
	yamlStrictPrefix     = "yaml: unmarshal errors:\n"
	yamlJSONStrictPrefix = "error converting YAML to JSON: " + yamlStrictPrefix
)

// yamlWarnings splits a strict YAML decoding error into one warning per
// problem ("line 4: key \"size\" already set in map"), as kube-apiserver
// words the warnings; any other error is one warning.
func yamlWarnings(msg string) []string {
	rest, ok := strings.CutPrefix(msg, yamlJSONStrictPrefix)
	if !ok {
		if rest, ok = strings.CutPrefix(msg, yamlStrictPrefix); !ok {
			return []string{msg}
		}
	}
	lines := strings.Split(rest, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return lines
}
