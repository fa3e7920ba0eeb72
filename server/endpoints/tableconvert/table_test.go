package tableconvert

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/wire"
)

// TestTableReusesEncodings checks that a list the watch cache encoded
// already gives its rows' objects without encoding them again.
func TestTableReusesEncodings(t *testing.T) {
	c, err := NewColumns(printedInfo())
	if err != nil {
		t.Fatal(err)
	}
	items := []*printed{newPrinted(), newPrinted()}
	items[1].Name = "q"
	raw := make([][]byte, len(items))
	for i, it := range items {
		if raw[i], err = wire.EncodeObject(it, c.gvk); err != nil {
			t.Fatal(err)
		}
	}
	out := negotiation.Output{Target: negotiation.AsTable, MetaVersion: "v1", Table: metav1.TableOptions{IncludeObject: metav1.IncludeObject}}
	tbl, err := Table(c, items, raw, out, true, columnsNow)
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range tbl.Rows {
		if &row.Object.Raw[0] != &raw[i][0] {
			t.Errorf("row %d encoded its object again", i)
		}
	}
}
