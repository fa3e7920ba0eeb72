package serviceaccount

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
)

// Upstream's bounds of a requested expiration (pkg/apis/authentication
// validation and defaults).
const (
	MinExpiration     = 10 * time.Minute
	DefaultExpiration = time.Hour
	maxExpirationSecs = 1 << 32
)

// tokenRequestKind is what the subresource reads and answers.
var tokenRequestKind = authenticationv1.SchemeGroupVersion.WithKind("TokenRequest")

// codecs decode and encode TokenRequests in JSON, YAML, protobuf and CBOR.
var codecs = serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict)

// TokenRequest serves serviceaccounts/token, upstream's TokenREST: a POST
// of an authentication.k8s.io/v1 TokenRequest answered with a token of
// the ServiceAccount the path names.
type TokenRequest struct {
	Issuer *Issuer
	// Objects reads the ServiceAccount and the bound object; reads here
	// should be consistent (a token for an object just created).
	Objects Objects
	// Audiences are the API audiences, a request's default.
	Audiences []string
	// MaxExpiration shortens longer requests (0: no bound).
	MaxExpiration time.Duration
	// MaxBodyBytes bounds the request body.
	MaxBodyBytes int64
}

// ServeHTTP serves POST .../namespaces/{namespace}/serviceaccounts/{name}/token.
func (t *TokenRequest) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		responsewriters.WriteError(w, r, apierrors.NewMethodNotSupported(schema.GroupResource{Resource: "serviceaccounts/token"}, r.Method))
		return
	}
	req, err := t.decode(r)
	if err != nil {
		responsewriters.WriteError(w, r, err)
		return
	}
	out, warnings, err := t.create(r.Context(), r.PathValue("namespace"), r.PathValue("name"), req)
	if err != nil {
		responsewriters.WriteError(w, r, err)
		return
	}
	responsewriters.WriteWarnings(w, warnings)
	mt, info, err := negotiation.NegotiateOutputMediaType(r, codecs, negotiation.DefaultEndpointRestrictions)
	if err != nil {
		responsewriters.WriteError(w, r, err)
		return
	}
	data, err := runtime.Encode(codecs.EncoderForVersion(info.Serializer, authenticationv1.SchemeGroupVersion), out)
	if err != nil {
		responsewriters.WriteError(w, r, apierrors.NewInternalError(err))
		return
	}
	w.Header().Set("Content-Type", mt.Accepted.MediaType)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write(data)
}

func (t *TokenRequest) decode(r *http.Request) (*authenticationv1.TokenRequest, error) {
	info, err := negotiation.NegotiateInputSerializer(r, false, codecs)
	if err != nil {
		return nil, err
	}
	limit := t.MaxBodyBytes
	if limit <= 0 {
		limit = 3 << 20
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if int64(len(body)) > limit {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit))
	}
	req := &authenticationv1.TokenRequest{}
	want := tokenRequestKind
	if _, gvk, err := info.Serializer.Decode(body, &want, req); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	} else if gvk != nil && *gvk != want {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body is a %s, not a %s", gvk, want))
	}
	return req, nil
}

// create is upstream's TokenREST.Create for the kinds apiloom serves.
func (t *TokenRequest) create(ctx context.Context, namespace, name string, req *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, []string, error) {
	gk := tokenRequestKind.GroupKind()
	if req.Name != "" && req.Name != name {
		return nil, nil, apierrors.NewInvalid(gk, name, field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), req.Name, "must match the service account name if specified")})
	}
	if req.Namespace != "" && req.Namespace != namespace {
		return nil, nil, apierrors.NewInvalid(gk, name, field.ErrorList{field.Invalid(field.NewPath("metadata", "namespace"), req.Namespace, "must match the service account namespace if specified")})
	}
	sa, err := t.Objects.ServiceAccount(ctx, namespace, name)
	if err != nil {
		return nil, nil, err
	}
	if req.UID != "" && req.UID != sa.UID {
		// TokenRequestServiceAccountUIDValidation, on in 1.37.
		return nil, nil, apierrors.NewConflict(schema.GroupResource{Group: gk.Group, Resource: gk.Kind}, name,
			fmt.Errorf("the UID in the token request (%s) does not match the UID of the service account (%s)", req.UID, sa.UID))
	}
	if len(req.Spec.Audiences) == 0 {
		req.Spec.Audiences = t.Audiences
	}
	if req.Spec.ExpirationSeconds == nil {
		secs := int64(DefaultExpiration / time.Second)
		req.Spec.ExpirationSeconds = &secs
	}
	req.Name, req.Namespace, req.UID = sa.Name, sa.Namespace, sa.UID
	now := time.Now()
	req.CreationTimestamp = metav1.NewTime(now)
	req.Status = authenticationv1.TokenRequestStatus{}
	if errs := validate(req); len(errs) > 0 {
		return nil, nil, apierrors.NewInvalid(gk, "", errs)
	}
	secret, err := t.boundObject(ctx, namespace, req.Spec.BoundObjectRef)
	if err != nil {
		return nil, nil, err
	}
	var warnings []string
	if max := int64(t.MaxExpiration / time.Second); max > 0 && *req.Spec.ExpirationSeconds > max {
		warnings = append(warnings, fmt.Sprintf("requested expiration of %d seconds shortened to %d seconds", *req.Spec.ExpirationSeconds, max))
		*req.Spec.ExpirationSeconds = max
	}
	tok, exp, err := t.Issuer.Token(sa, secret, req.Spec.Audiences, time.Duration(*req.Spec.ExpirationSeconds)*time.Second)
	if err != nil {
		return nil, nil, apierrors.NewInternalError(fmt.Errorf("failed to generate token: %v", err))
	}
	req.Status = authenticationv1.TokenRequestStatus{Token: tok, ExpirationTimestamp: metav1.NewTime(exp)}
	return req, warnings, nil
}

// validate is upstream's ValidateTokenRequest for requests not bound to a
// webhook configuration.
func validate(req *authenticationv1.TokenRequest) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	secs := *req.Spec.ExpirationSeconds
	if secs < int64(MinExpiration/time.Second) {
		errs = append(errs, field.Invalid(spec.Child("expirationSeconds"), secs, "may not specify a duration less than 10 minutes"))
	}
	if secs > maxExpirationSecs {
		errs = append(errs, field.Invalid(spec.Child("expirationSeconds"), secs, "may not specify a duration larger than 2^32 seconds"))
	}
	return errs
}

// boundObject reads the object ref binds the token to: a Secret, the one
// kind upstream binds to that apiloom serves. Pods and Nodes are not
// served, so no such object could be read now nor checked on each request
// later: a ref to one is refused as a kind that cannot be bound, rather
// than issuing a token whose binding nothing enforces.
func (t *TokenRequest) boundObject(ctx context.Context, namespace string, ref *authenticationv1.BoundObjectReference) (*corev1.Secret, error) {
	if ref == nil {
		return nil, nil
	}
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	if gvk.Group != "" || gvk.Kind != "Secret" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token to object of type %s", gvk.String()))
	}
	s, err := t.Objects.Secret(ctx, namespace, ref.Name)
	if err != nil {
		return nil, err
	}
	if ref.UID != "" && ref.UID != s.UID {
		return nil, apierrors.NewConflict(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, ref.Name,
			fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
	}
	return s, nil
}
