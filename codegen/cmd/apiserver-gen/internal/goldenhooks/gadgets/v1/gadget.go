// Package v1 holds the hooks of the golden test's gadgets kinds
// (testdata/apis/gadgets/v1): the methods serving Gadget's custom
// subresources. It lives outside testdata because apiserver-gen loads
// hooks as <hooks-pkg>/..., a pattern the go command does not extend
// into testdata directories.
package v1

import (
	"fmt"
	"io"

	gadgetsv1 "github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/testdata/apis/gadgets/v1"
	"github.com/apiloom/apiloom/server/hook"
)

// Gadget serves Gadget's inspect, summary and events subresources.
type Gadget struct{}

// Inspect answers how deep it looked.
func (Gadget) Inspect(_ *hook.Request, g *gadgetsv1.Gadget, in *gadgetsv1.InspectRequest) (*gadgetsv1.InspectResult, error) {
	return &gadgetsv1.InspectResult{Summary: fmt.Sprintf("%s at depth %d", g.Name, in.Depth)}, nil
}

// GetSummary answers the gadget's name.
func (Gadget) GetSummary(_ *hook.Request, g *gadgetsv1.Gadget) (*gadgetsv1.InspectResult, error) {
	return &gadgetsv1.InspectResult{Summary: g.Name}, nil
}

// Events writes one line.
func (Gadget) Events(_ *hook.Request, g *gadgetsv1.Gadget, _ *gadgetsv1.GadgetEventOptions, w io.Writer) error {
	_, err := fmt.Fprintf(w, "%s\n", g.Name)
	return err
}
