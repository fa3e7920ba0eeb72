package tableconvert

import (
	"bytes"
	"encoding/json"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/wire"
)

// Table renders items as a metav1.Table of the negotiated meta.k8s.io
// version, with c's columns and ages measured to now. Each row carries the
// object as ?includeObject= (out.Table) asks: its PartialObjectMetadata
// (the default), the whole object, or nothing. headers adds the column
// definitions; a watch sends them only once. raw, when not nil, holds each
// item already encoded (storage.List.Raw) and saves encoding it again for
// ?includeObject=Object.
func Table[O resource.Object](c *Columns, items []O, raw [][]byte, out negotiation.Output, headers bool, now time.Time) (*metav1.Table, error) {
	opts := out.Table
	t := &metav1.Table{
		TypeMeta: metav1.TypeMeta{Kind: "Table", APIVersion: out.MetaAPIVersion()},
		Rows:     make([]metav1.TableRow, 0, len(items)),
	}
	if headers {
		t.ColumnDefinitions = c.defs
	}
	var buf bytes.Buffer
	for i, item := range items {
		cells, err := c.Cells(item, now, &buf)
		if err != nil {
			return nil, err
		}
		row := metav1.TableRow{Cells: cells}
		switch {
		case opts.IncludeObject == metav1.IncludeObject && !isInitialEventsEnd(item):
			if raw != nil {
				row.Object.Raw = raw[i]
			} else {
				row.Object.Raw, err = wire.EncodeObject(item, c.gvk)
			}
		case opts.IncludeObject == metav1.IncludeNone && !isInitialEventsEnd(item):
		default:
			row.Object.Raw, err = json.Marshal(out.PartialObject(item))
		}
		if err != nil {
			return nil, err
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// isInitialEventsEnd reports whether obj is the bookmark that ends a
// watch-list's initial events; in a Table watch it always travels as
// PartialObjectMetadata so that the annotation reaches the client.
func isInitialEventsEnd(obj metav1.Object) bool {
	return obj.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
}
