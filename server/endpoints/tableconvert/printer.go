package tableconvert

import (
	"time"

	"github.com/apiloom/apiloom/server/resource"
)

// WithPrinter makes c render p's columns and cells, when the kind has its
// own printer (resource.Definition.Printer), instead of the name and the
// printer columns.
func WithPrinter[O resource.Object](c *Columns, p *resource.Printer[O]) {
	if p == nil {
		return
	}
	c.defs, c.paths = p.Columns, nil
	c.custom = func(obj resource.Object, now time.Time) []any { return p.Cells(obj.(O), now) }
}
