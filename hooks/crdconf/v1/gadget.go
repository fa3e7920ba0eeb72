package v1

import (
	crdconfv1 "github.com/apiloom/apiloom/apis/crdconf/v1"
	"github.com/apiloom/apiloom/server/hook"
)

// Gadget holds the hooks of Gadget: every mutating point, each leaving
// the object as it is, so every write goes through the hooks' path.
type Gadget struct{}

// Default changes nothing.
func (Gadget) Default(*hook.Request, *crdconfv1.Gadget) {}

// PrepareForCreate changes nothing.
func (Gadget) PrepareForCreate(*hook.Request, *crdconfv1.Gadget) {}

// PrepareForUpdate changes nothing.
func (Gadget) PrepareForUpdate(*hook.Request, *crdconfv1.Gadget, *crdconfv1.Gadget) {}

// PrepareForStatusUpdate changes nothing.
func (Gadget) PrepareForStatusUpdate(*hook.Request, *crdconfv1.Gadget, *crdconfv1.Gadget) {}
