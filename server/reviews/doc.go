// Package reviews serves the kinds kubectl auth can-i and kubectl auth
// whoami create: authorization.k8s.io/v1 SelfSubjectAccessReview,
// SubjectAccessReview, LocalSubjectAccessReview and SelfSubjectRulesReview,
// and authentication.k8s.io/v1 SelfSubjectReview. Like kube-apiserver's,
// they are create-only and never stored: a create answers a question about
// the request's user (request.UserFrom) or the subject the review names,
// asked of an authorizer.Authorizer or an authorizer.RuleResolver, and
// returns the review with its status filled in.
//
// The server's generic endpoints (package server/endpoints) serve stored
// kinds; this package is installed beside them in the same mux, and its
// resource.Infos (CreateOnly) join the registry's in discovery and OpenAPI.
package reviews
