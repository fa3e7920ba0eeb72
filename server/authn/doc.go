// Package authn builds the server's authenticator from k8s.io/apiserver's
// own authenticators, so that a request is identified exactly as
// kube-apiserver would identify it: X.509 client certificates, bearer tokens
// (kube-apiserver's --token-auth-file and the server's loopback token),
// the system:authenticated group, and anonymous requests last when enabled.
// It only says who a request is; what that user may do is decided after it.
package authn
