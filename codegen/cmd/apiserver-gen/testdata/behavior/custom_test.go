package behavior

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gadgetsv1 "github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/testdata/apis/gadgets/v1"
	gadgetsgen "github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/testdata/golden/gadgets/v1"
	"github.com/apiloom/apiloom/server/hook"
	"github.com/apiloom/apiloom/server/resource"
)

// TestCustom calls Gadget's generated custom subresources: each reaches
// its hooks method with its typed input, and Info lists them alike.
func TestCustom(t *testing.T) {
	def := gadgetsgen.Gadget
	g := &gadgetsv1.Gadget{ObjectMeta: metav1.ObjectMeta{Name: "g1"}}
	req := hook.NewRequest(context.Background(), hook.Read, "", false, nil, "", "g1", nil)
	if len(def.Custom) != 3 || len(def.Info.Subresources) != 3 {
		t.Fatalf("Custom %d, Subresources %d; want 3 and 3", len(def.Custom), len(def.Info.Subresources))
	}
	for i, c := range def.Custom {
		if s := def.Info.Subresources[i]; s.Name != c.Name || s.Type != c.Type {
			t.Errorf("Subresources[%d] = %s %s, Custom[%d] = %s %s", i, s.Name, s.Type, i, c.Name, c.Type)
		}
	}

	inspect := def.Custom[0]
	in := inspect.NewInput()
	in.(*gadgetsv1.InspectRequest).Depth = 3
	out, err := inspect.Action(req, g, in)
	if err != nil || out.(*gadgetsv1.InspectResult).Summary != "g1 at depth 3" {
		t.Errorf("inspect = %+v, %v", out, err)
	}
	if inspect.Type != resource.Action || !strings.Contains(inspect.InputSchema, `"default":1`) {
		t.Errorf("inspect: type %s, schema %s", inspect.Type, inspect.InputSchema)
	}

	summary := def.Custom[1]
	if out, err := summary.View(req, g); err != nil || out.(*gadgetsv1.InspectResult).Summary != "g1" || summary.NewInput != nil {
		t.Errorf("summary = %+v, %v", out, err)
	}

	events := def.Custom[2]
	var b strings.Builder
	if err := events.Stream(req, g, events.NewInput(), &b); err != nil || b.String() != "g1\n" {
		t.Errorf("events wrote %q, %v", b.String(), err)
	}
	if _, ok := events.NewInput().(*gadgetsv1.GadgetEventOptions); !ok {
		t.Errorf("events' options are %T", events.NewInput())
	}
}
