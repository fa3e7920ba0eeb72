// Package serviceaccount issues and validates ServiceAccount tokens as
// kube-apiserver does (k8s.io/kubernetes pkg/serviceaccount): JWTs signed
// by the server's key, with the kubernetes.io private claims naming the
// ServiceAccount and the object the token is bound to, checked on every
// request against the objects still stored. It also serves the issuer's
// OpenID discovery document and JWKS. It is written on go-jose v4, since
// k8s.io/kubernetes cannot be imported.
package serviceaccount
