// Package negotiation decides the form of a response from its request: the
// encoding (JSON, YAML, CBOR, protobuf) and the view (the objects, a
// meta.k8s.io Table or PartialObjectMetadata) the Accept header asks for,
// whether the body may be gzipped, and the encoding of an error's Status.
// It reads headers and answers with an Output; writing the response is
// server/endpoints/responsewriters' job, so that every response writer and
// every verb shares one reading of Accept, as kube-apiserver's does.
package negotiation
