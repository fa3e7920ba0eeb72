package negotiation

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Media types the server reads and writes.
const (
	MediaJSON       = "application/json"
	MediaYAML       = "application/yaml"
	MediaJSONPatch  = "application/json-patch+json"
	MediaMergePatch = "application/merge-patch+json"
	MediaApplyPatch = "application/apply-patch+yaml"
	// MediaCBOR is one CBOR document; MediaCBORSeq a watch's events, one
	// CBOR document each (RFC 8742); MediaApplyCBOR a server-side apply
	// body in CBOR, which client-go sends when it prefers CBOR.
	MediaCBOR      = "application/cbor"
	MediaCBORSeq   = "application/cbor-seq"
	MediaApplyCBOR = "application/apply-patch+cbor"
	// MediaProtobuf is Kubernetes' protobuf encoding, which client-go and
	// kubectl speak for kinds with protobuf methods: k8s.io/api's, and those
	// of apis/ that `make generate` gave them.
	MediaProtobuf = "application/vnd.kubernetes.protobuf"
)

// Encoding is the syntax of a response.
type Encoding int

const (
	JSON Encoding = iota
	YAML
	CBOR
	Protobuf
)

// Target is what a response carries: the objects themselves or one of the
// meta.k8s.io views of them that a client asked for with ;as=.
type Target int

const (
	AsObject      Target = iota
	AsTable              // metav1.Table (kubectl get)
	AsPartial            // PartialObjectMetadata (metadata-only clients)
	AsPartialList        // PartialObjectMetadataList
)

// Output is the negotiated form of a response.
type Output struct {
	Encoding Encoding
	Target   Target
	// MetaVersion is the meta.k8s.io version of a Table or partial view:
	// "v1" or "v1beta1".
	MetaVersion string
	// Table holds the Table view's options (?includeObject=), which the
	// caller reads from the query (Negotiate leaves them empty).
	Table metav1.TableOptions
	// Gzip is true when a body larger than the response writers'
	// threshold is to be compressed (AcceptsGzip, as the caller allows).
	Gzip bool
}

// Answer is what a request is answered with, which limits the views.
type Answer int

const (
	OneObject   Answer = iota // get, create, update, patch, delete
	ObjectList                // list, deletecollection
	EventStream               // watch: one object per event
)

// ContentType is the Content-Type of a response in this form.
// kube-apiserver does not repeat the ;as= parameters for resources.
func (o Output) ContentType() string {
	switch o.Encoding {
	case YAML:
		return MediaYAML
	case CBOR:
		return MediaCBOR
	case Protobuf:
		return MediaProtobuf
	}
	return MediaJSON
}

// StreamContentType is the Content-Type of a watch in this form: a CBOR
// watch is a sequence of documents, whether the client asked for
// application/cbor or application/cbor-seq, as kube-apiserver answers.
func (o Output) StreamContentType() string {
	switch o.Encoding {
	case CBOR:
		return MediaCBORSeq
	case Protobuf:
		return MediaProtobuf + ";stream=watch"
	}
	return MediaJSON
}

// MetaAPIVersion is the apiVersion of a Table or partial view.
func (o Output) MetaAPIVersion() string { return metav1.GroupName + "/" + o.MetaVersion }

// PartialObject is obj's metadata as a PartialObjectMetadata of the
// negotiated meta.k8s.io version.
func (o Output) PartialObject(obj metav1.Object) *metav1.PartialObjectMetadata {
	p := meta.AsPartialObjectMetadata(obj)
	p.APIVersion, p.Kind = o.MetaAPIVersion(), "PartialObjectMetadata"
	return p
}
