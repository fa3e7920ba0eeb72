package endpoints

import (
	"encoding/json"

	metatable "k8s.io/apimachinery/pkg/api/meta/table"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/wire"
)

// tableColumns are the columns of every resource's Table, as a CRD without
// printer columns has them: the name and the age. kubectl prints a "date"
// column's cell as it comes, so the cell is already the human-readable age.
var tableColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Age", Type: "date", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
}

// table renders items as a metav1.Table of the negotiated meta.k8s.io
// version. Each row carries the object as ?includeObject= asks: its
// PartialObjectMetadata (the default), the whole object, or nothing.
// headers adds the column definitions; a watch sends them only once.
func (h *handler[O]) table(items []O, out output, headers bool) (*metav1.Table, error) {
	opts := out.table
	t := &metav1.Table{
		TypeMeta: metav1.TypeMeta{Kind: "Table", APIVersion: out.metaAPIVersion()},
		Rows:     make([]metav1.TableRow, 0, len(items)),
	}
	if headers {
		t.ColumnDefinitions = tableColumns
	}
	for _, item := range items {
		row := metav1.TableRow{Cells: []any{item.GetName(), metatable.ConvertToHumanReadableDateType(item.GetCreationTimestamp())}}
		var err error
		switch {
		case opts.IncludeObject == metav1.IncludeObject && !isInitialEventsEnd(item):
			row.Object.Raw, err = wire.EncodeObject(item, h.gvk)
		case opts.IncludeObject == metav1.IncludeNone && !isInitialEventsEnd(item):
		default:
			row.Object.Raw, err = json.Marshal(partialObject(item, out))
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
