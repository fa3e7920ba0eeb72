package listwriter

import (
	"bytes"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
	"github.com/apiloom/apiloom/server/endpoints/tableconvert"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// Lists says what a resource's lists are made of.
type Lists struct {
	// Kind is the items' kind; ListKind the list's (WidgetList).
	Kind     schema.GroupVersionKind
	ListKind string
	// ItemsTyped is true when items carry their kind and apiVersion; a
	// built-in kind's do not (resource.Info.ListItemsTyped).
	ItemsTyped bool
	// Columns render the Table view, its ages measured to Now().
	Columns *tableconvert.Columns
	Now     func() time.Time
}

// table renders items as the list's Table.
func table[O resource.Object](l Lists, items []O, raw [][]byte, out negotiation.Output) (*metav1.Table, error) {
	return tableconvert.Table(l.Columns, items, raw, out, true, l.Now())
}

// Write answers with items as one list in the negotiated form. raw,
// when not nil, is each item already encoded as JSON (storage.List.Raw),
// and enc, when not nil, in other formats (storage.List.Encodings). Only
// YAML, a rare request, is built whole to be converted. Errors found once
// the response started are logged (responsewriters.StreamFailed), not
// returned.
func Write[O resource.Object](w http.ResponseWriter, r *http.Request, l Lists, out negotiation.Output, items []O, raw [][]byte, enc storage.ListEncodings, lm metav1.ListMeta) error {
	if out.Encoding == negotiation.YAML {
		var buf bytes.Buffer
		if err := EncodeJSON(&buf, l, items, raw, lm, out); err != nil {
			return err
		}
		return responsewriters.WriteEncoded(w, out, http.StatusOK, buf.Bytes(), nil)
	}
	w.Header().Set("Content-Type", out.ContentType())
	body := responsewriters.NewBodyWriter(w, http.StatusOK, out.Gzip)
	var err error
	switch out.Encoding {
	case negotiation.CBOR:
		err = EncodeCBOR(body, l, items, enc, lm, out)
	case negotiation.Protobuf:
		err = EncodeProtobuf(body, l, items, enc, lm, out)
	default:
		err = EncodeJSON(body, l, items, raw, lm, out)
	}
	if cerr := body.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		responsewriters.StreamFailed(r, "list", err)
	}
	return nil
}
