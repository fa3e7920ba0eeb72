package reviews

import (
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/apiloom/apiloom/server/endpoints/auditlog"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/endpoints/responsewriters"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
)

// kindHandler serves one review kind's collection: the create handler of
// kube-apiserver cut down to what a kind that is never stored needs.
type kindHandler struct {
	h *Handler
	k *kind
}

func (kh *kindHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		kh.h.writeStatus(w, r, &metav1.Status{
			Status: metav1.StatusFailure, Message: "the server does not allow this method on the requested resource",
			Reason: metav1.StatusReasonMethodNotAllowed, Details: &metav1.StatusDetails{}, Code: http.StatusMethodNotAllowed,
		})
		return
	}
	obj, warnings, err := kh.decode(r)
	if err == nil {
		if auditlog.Audited(r.Context()) {
			// As kube-apiserver's create handler: the review as decoded.
			want := kh.k.info.GroupVersionKind()
			audit.LogRequestObject(r.Context(), obj, want.GroupVersion(), schema.GroupVersionResource{}, "", kh.h.codecs)
		}
		obj, err = kh.k.create(kh.h, r, obj)
	}
	if err != nil {
		kh.h.writeError(w, r, err)
		return
	}
	for _, msg := range warnings {
		if v, err := utilnet.NewWarningHeader(299, "-", msg); err == nil {
			w.Header().Add("Warning", v)
		}
	}
	kh.h.writeObject(w, r, http.StatusCreated, obj)
}

// decode checks the create options and reads the body into a new object
// of the kind, with its namespace made the request's (the URL's for a
// namespaced kind, none for the others). An unknown field fails the
// request with fieldValidation=Strict and is a warning by default.
func (kh *kindHandler) decode(r *http.Request) (runtime.Object, []string, error) {
	q := r.URL.Query()
	if err := checkCreateOptions(q); err != nil {
		return nil, nil, err
	}
	info, err := negotiation.NegotiateInputSerializer(r, false, kh.h.codecs)
	if err != nil {
		return nil, nil, err
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, kh.h.max+1))
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	if int64(len(body)) > kh.h.max {
		return nil, nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", kh.h.max))
	}
	decoder := info.Serializer
	if info.StrictSerializer != nil {
		decoder = info.StrictSerializer
	}
	want := kh.k.info.GroupVersionKind()
	obj := kh.k.new()
	_, gvk, err := decoder.Decode(body, &want, obj)
	var warnings []string
	if err != nil {
		strict, isStrict := runtime.AsStrictDecodingError(err)
		switch {
		case !isStrict:
			return nil, nil, kh.decodeError(body, gvk, err)
		case q.Get("fieldValidation") == metav1.FieldValidationStrict:
			return nil, nil, kh.decodeError(body, gvk, err)
		case q.Get("fieldValidation") != metav1.FieldValidationIgnore:
			for _, e := range strict.Errors() {
				warnings = append(warnings, e.Error())
			}
		}
	}
	if gvk != nil && *gvk != want {
		// kube-apiserver decodes into the kind's internal type, which a
		// body of another kind has no conversion to.
		return nil, nil, kh.decodeError(body, gvk, fmt.Errorf("converting (%s.%s) to (%s.%s): unknown conversion",
			gvk.Version, gvk.Kind, groupWord(want.Group), want.Kind))
	}
	namespace := ""
	if kh.k.info.Namespaced {
		namespace = r.PathValue("namespace")
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, apierrors.NewInternalError(err)
	}
	switch ns := m.GetNamespace(); {
	case ns == namespace:
	case ns == "" || namespace == "":
		m.SetNamespace(namespace)
	default:
		return nil, nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return obj, warnings, nil
}

// groupWord is the first label of a group, the name of kube-apiserver's
// internal package for it ("authorization" for authorization.k8s.io).
func groupWord(group string) string {
	for i := range len(group) {
		if group[i] == '.' {
			return group[:i]
		}
	}
	return group
}

// decodeError is kube-apiserver's 400 for a body that does not decode:
// naming the kind the body claims, or quoting its start when it claims
// none.
func (kh *kindHandler) decodeError(body []byte, gvk *schema.GroupVersionKind, err error) error {
	want := kh.k.info.Kind
	if gvk != nil && gvk.Kind != "" {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", gvk.Kind, gvk.Version, want, err))
	}
	return request.UnrecognizedObject(want, body, err)
}

// checkCreateOptions validates dryRun, fieldManager and fieldValidation
// as kube-apiserver's create handler does, before the body is read.
func checkCreateOptions(q url.Values) error {
	opts := &metav1.CreateOptions{DryRun: q["dryRun"], FieldManager: q.Get("fieldManager"), FieldValidation: q.Get("fieldValidation")}
	if errs := metav1validation.ValidateCreateOptions(opts); len(errs) > 0 {
		return apierrors.NewInvalid(metav1.SchemeGroupVersion.WithKind("CreateOptions").GroupKind(), "", errs)
	}
	return nil
}

// writeObject writes obj in the media type the request accepts (JSON,
// YAML or protobuf), falling back to JSON when it accepts none of them.
func (h *Handler) writeObject(w http.ResponseWriter, r *http.Request, code int, obj runtime.Object) {
	mt, info, err := negotiation.NegotiateOutputMediaType(r, h.codecs, negotiation.DefaultEndpointRestrictions)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	gv := obj.GetObjectKind().GroupVersionKind().GroupVersion()
	if gvks, _, err := scheme.ObjectKinds(obj); err == nil && len(gvks) > 0 {
		gv = gvks[0].GroupVersion()
	}
	data, err := runtime.Encode(h.codecs.EncoderForVersion(info.Serializer, gv), obj)
	if err != nil {
		h.writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	if auditlog.Audited(r.Context()) {
		audit.LogResponseObject(r.Context(), obj, gv, h.codecs)
	}
	w.Header().Set("Content-Type", mt.Accepted.MediaType)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(data)
}

// writeError writes err as a metav1.Status, with kube-apiserver's code and
// reason for an API error and a 500 for anything else, negotiated as every
// error of the server is (responsewriters.WriteError).
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	responsewriters.WriteError(w, r, err)
}

func (h *Handler) writeStatus(w http.ResponseWriter, r *http.Request, s *metav1.Status) {
	responsewriters.WriteError(w, r, &apierrors.StatusError{ErrStatus: *s})
}
