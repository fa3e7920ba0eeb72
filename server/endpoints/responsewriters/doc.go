// Package responsewriters writes responses in the form server/endpoints/
// negotiation chose: one encoded document after its Warning headers, a body
// of unknown length gzipped once it proves large, and every error as a
// metav1.Status in the encoding its request accepts. The handlers of every
// verb and the server's own filters write through it, so that a client
// sees one wire format whoever answers, as it would from kube-apiserver's
// responsewriters.
package responsewriters
