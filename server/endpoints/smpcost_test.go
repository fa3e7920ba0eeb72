package endpoints

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/endpoints/patch"
	"github.com/apiloom/apiloom/server/endpoints/request"
)

// TestStrategicPatchWorkLimit: a patch whose merge would exceed the
// budget is a 413 before any merging, and changes nothing.
func TestStrategicPatchWorkLimit(t *testing.T) {
	l := request.DefaultLimits()
	l.StrategicMergePatchMaxListElements = 10
	e := newRigEnv(t, true, WithLimits(l))
	base := rigsPath + "work/rigs/"
	tags := func(n int) string {
		var s []string
		for i := range n {
			s = append(s, fmt.Sprintf("%q", fmt.Sprint("t", i)))
		}
		return "[" + strings.Join(s, ",") + "]"
	}
	const msg = "Request entity too large: The allowed maximum of list elements merged by a strategic merge patch is 10 (the object's and the patch's together; several lists count by the squares of their lengths), and this patch merges more"

	before := e.createRig("work", "r", rigSpecJSON) // one tag
	e.do("PATCH", base+"r", smpType, `{"spec":{"tags":`+tags(10)+`}}`).wantStatus(t, 413, metav1.StatusReasonRequestEntityTooLarge, msg)
	if after := e.do("GET", base+"r", "", "").rig(t, http.StatusOK); after.ResourceVersion != before.ResourceVersion {
		t.Fatal("a refused patch changed the object")
	}
	if got := e.do("PATCH", base+"r", smpType, `{"spec":{"tags":`+tags(9)+`}}`).rig(t, http.StatusOK); len(got.Spec.Tags) != 10 {
		t.Fatalf("tags %v", got.Spec.Tags)
	}
	// Now the object's list is at the limit: the smallest merge into it
	// is over it, while replacing or adding to another list is not.
	e.do("PATCH", base+"r", smpType, `{"spec":{"tags":["one"]}}`).wantStatus(t, 413, metav1.StatusReasonRequestEntityTooLarge, msg)
	e.do("PATCH", base+"r", smpType, `{"spec":{"zones":`+tags(50)+`,"ports":[{"name":"c"}]}}`).rig(t, http.StatusOK)
	// Several lists count by their squares: ports and volumes (4 each)
	// and the mounts of v (1 + 8) make 4² + 4² + 9² > 10².
	e.createRig("work", "s", `{"ports":[{"name":"a"}],"volumes":[{"name":"v","mounts":["m"]}]}`)
	e.do("PATCH", base+"s", smpType, `{"spec":{"ports":[{"name":"b"},{"name":"c"}],"volumes":[{"name":"w"},{"name":"x"}],"tags":["a"]}}`).rig(t, http.StatusOK)
	e.do("PATCH", base+"s", smpType, `{"spec":{"ports":[{"name":"d"}],"volumes":[{"name":"v","mounts":`+tags(8)+`}]}}`).
		wantStatus(t, 413, metav1.StatusReasonRequestEntityTooLarge, msg)
}

// BenchmarkStrategicPatchAtLimit measures the slowest merges the default
// limit lets through, one list of request.DefaultStrategicMergePatchMaxListElements
// elements: what one patch attempt may cost the server at most.
func BenchmarkStrategicPatchAtLimit(b *testing.B) {
	h := NewResource(rigDefinition(), nil, WithSchemas(patch.NewSchemas(rigDefinitions))).(*handler[*rig])
	n := request.DefaultStrategicMergePatchMaxListElements
	ports := func(prefix string, k int) []rigPort {
		p := make([]rigPort, k)
		for i := range p {
			p[i] = rigPort{Name: fmt.Sprint(prefix, i), Port: int32(i)}
		}
		return p
	}
	tags := func(k int) []string {
		t := make([]string, k)
		for i := range t {
			t[i] = fmt.Sprint("t", i)
		}
		return t
	}
	opts := request.WriteOptions{FieldValidation: metav1.FieldValidationWarn}
	for _, bc := range []struct {
		name  string
		spec  rigSpec
		patch any
	}{
		{"half new keyed elements", rigSpec{Ports: ports("o", n/2)}, map[string]any{"ports": ports("p", n/2)}},
		{"one keyed element into a long list", rigSpec{Ports: ports("o", n-1)}, map[string]any{"ports": ports("o", 1)}},
		{"one scalar into a long list", rigSpec{Tags: tags(n - 1)}, map[string]any{"tags": []string{"new"}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			current := &rig{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"}, Spec: bc.spec}
			patch, err := json.Marshal(map[string]any{"spec": bc.patch})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, _, _, err := h.strategicPatch(patch, copyObject(current), opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPatchApply compares applying one small patch to a rig as a
// JSON merge patch and as a strategic merge patch (decode, merge, convert
// to the typed object; no storage).
func BenchmarkPatchApply(b *testing.B) {
	h := NewResource(rigDefinition(), nil, WithSchemas(patch.NewSchemas(rigDefinitions))).(*handler[*rig])
	var current rig
	if err := json.Unmarshal([]byte(rigOriginal), &current); err != nil {
		b.Fatal(err)
	}
	opts := request.WriteOptions{FieldValidation: metav1.FieldValidationWarn}
	body := []byte(`{"metadata":{"labels":{"b":"2"}},"spec":{"size":3,"params":{"q":"2"}}}`)
	for _, mt := range []string{negotiation.MediaMergePatch, patch.MediaStrategicMergePatch} {
		b.Run(mt[len("application/"):], func(b *testing.B) {
			p, err := patch.Parse(mt, body, opts.Strict())
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, _, _, err := h.applyPatch(p, copyObject(&current), opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
