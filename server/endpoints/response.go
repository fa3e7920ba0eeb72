package endpoints

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"sigs.k8s.io/yaml"

	"github.com/apiloom/apiloom/server/wire"
)

// writeObject answers with one object in the negotiated form: the object
// itself, a one-row Table or its PartialObjectMetadata. Errors it returns
// were found before anything was written; as negotiate validated the form,
// they can only be encoding failures.
func (h *handler[O]) writeObject(w http.ResponseWriter, out output, code int, obj O, warnings []string) error {
	var data []byte
	var err error
	switch out.target {
	case asObject:
		data, err = h.encodeObject(obj, out)
	case asTable:
		var t *metav1.Table
		if t, err = h.table([]O{obj}, nil, out, true); err == nil {
			t.ResourceVersion = obj.GetResourceVersion()
			data, err = encodeView(t, out)
		}
	default: // asPartial; negotiate refused the list view
		data, err = encodeView(partialObject(obj, out), out)
	}
	if err != nil {
		return err
	}
	return writeEncoded(w, out, code, data, warnings)
}

// writeEncoded answers with data, one document in the negotiated encoding
// (JSON converted when YAML was asked for), compressed as negotiated,
// after warnings.
func writeEncoded(w http.ResponseWriter, out output, code int, data []byte, warnings []string) error {
	if out.enc == encYAML {
		var err error
		if data, err = yaml.JSONToYAML(data); err != nil {
			return err
		}
	}
	writeWarnings(w, warnings)
	w.Header().Set("Content-Type", out.contentType())
	writeBody(w, code, out.gzip, data)
	return nil
}

// encodeObject encodes obj, of the resource's kind, as out asks.
func (h *handler[O]) encodeObject(obj O, out output) ([]byte, error) {
	switch out.enc {
	case encCBOR:
		return wire.EncodeObjectCBOR(obj, h.gvk)
	case encProtobuf:
		return wire.EncodeObjectProtobuf(obj, h.gvk)
	}
	return wire.EncodeObject(obj, h.gvk)
}

// encodeView encodes v, which carries its own kind (a Table, a partial
// object, a Status, a Scale), as out asks: CBOR, protobuf (negotiate
// offers it only for views that have it), or JSON (YAML is converted from
// it by the writer).
func encodeView(v runtime.Object, out output) ([]byte, error) {
	switch out.enc {
	case encCBOR:
		return wire.EncodeCBOR(v)
	case encProtobuf:
		return wire.EncodeObjectProtobuf(v, v.GetObjectKind().GroupVersionKind())
	}
	return json.Marshal(v)
}

// partialObject is obj's metadata as a PartialObjectMetadata of the
// negotiated meta.k8s.io version.
func partialObject(obj metav1.Object, out output) *metav1.PartialObjectMetadata {
	p := meta.AsPartialObjectMetadata(obj)
	p.APIVersion, p.Kind = out.metaAPIVersion(), "PartialObjectMetadata"
	return p
}

// writeWarnings adds a Warning header per message, in the format
// kube-apiserver uses and client-go surfaces: 299 - "message".
func writeWarnings(w http.ResponseWriter, warnings []string) {
	if len(warnings) == 0 {
		return
	}
	seen := make(map[string]bool, len(warnings))
	for _, msg := range warnings {
		if seen[msg] {
			continue
		}
		seen[msg] = true
		if v, err := utilnet.NewWarningHeader(299, "-", msg); err == nil {
			w.Header().Add("Warning", v)
		}
	}
}

// streamFailed records an error found after the response started, when
// the client can no longer be told: a write to a client that went away, or
// an object that did not encode.
func streamFailed(r *http.Request, what string, err error) {
	logStreamFailed(r.Context(), r.URL.Path, what, err)
}

// logStreamFailed is streamFailed for a response that outlives its
// request's handler (a detached watch), which keeps only its path.
func logStreamFailed(ctx context.Context, path, what string, err error) {
	slog.DebugContext(ctx, "endpoints: response ended early", "path", path, "during", what, "err", err)
}
