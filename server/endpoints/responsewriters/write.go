package responsewriters

import (
	"encoding/json"
	"net/http"

	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"sigs.k8s.io/yaml"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/wire"
)

// WriteEncoded answers with data, one document in the negotiated encoding
// (JSON converted when YAML was asked for), compressed as negotiated,
// after warnings.
func WriteEncoded(w http.ResponseWriter, out negotiation.Output, code int, data []byte, warnings []string) error {
	if out.Encoding == negotiation.YAML {
		var err error
		if data, err = yaml.JSONToYAML(data); err != nil {
			return err
		}
	}
	WriteWarnings(w, warnings)
	w.Header().Set("Content-Type", out.ContentType())
	writeBody(w, code, out.Gzip, data)
	return nil
}

// EncodeView encodes v, which carries its own kind (a Table, a partial
// object, a Status, a Scale), as out asks: CBOR, protobuf (negotiation
// offers it only for views that have it), or JSON (YAML is converted from
// it by the writer).
func EncodeView(v runtime.Object, out negotiation.Output) ([]byte, error) {
	switch out.Encoding {
	case negotiation.CBOR:
		return wire.EncodeCBOR(v)
	case negotiation.Protobuf:
		return wire.EncodeObjectProtobuf(v, v.GetObjectKind().GroupVersionKind())
	}
	return json.Marshal(v)
}

// WriteWarnings adds a Warning header per message, in the format
// kube-apiserver uses and client-go surfaces: 299 - "message".
func WriteWarnings(w http.ResponseWriter, warnings []string) {
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
