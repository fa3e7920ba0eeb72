package storagetest

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apiloom/apiloom/server/resource"
)

// Prefix is the key prefix the suite expects implementations to store
// Widgets under. Each test runs on its own namespaced etcd client, so
// implementations may use it unchanged.
const Prefix = "/registry/storagetest.apiloom.dev/widgets/"

// Widget is the suite's test resource: namespaced, with a spec, a status
// and one selectable field (spec.color).
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WidgetSpec   `json:"spec,omitempty"`
	Status WidgetStatus `json:"status,omitempty"`
}

// WidgetSpec is a Widget's desired state.
type WidgetSpec struct {
	Size  int    `json:"size,omitempty"`
	Color string `json:"color,omitempty"`
}

// WidgetStatus is a Widget's observed state.
type WidgetStatus struct {
	Phase string `json:"phase,omitempty"`
}

// DeepCopyObject implements runtime.Object.
func (w *Widget) DeepCopyObject() runtime.Object {
	if w == nil {
		return nil
	}
	out := new(Widget)
	out.TypeMeta = w.TypeMeta
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec = w.Spec
	out.Status = w.Status
	return out
}

// Definition returns the Widget resource's definition, as generated code
// would write it.
func Definition() *resource.Definition[*Widget] {
	return &resource.Definition[*Widget]{
		Info: resource.Info{
			Group:            "storagetest.apiloom.dev",
			Version:          "v1",
			Kind:             "Widget",
			ListKind:         "WidgetList",
			Plural:           "widgets",
			Singular:         "widget",
			Namespaced:       true,
			HasStatus:        true,
			SelectableFields: []string{"spec.color"},
		},
		New: func() *Widget { return new(Widget) },
		Fields: func(w *Widget) fields.Set {
			s := resource.ObjectFields(w, true)
			s["spec.color"] = w.Spec.Color
			return s
		},
		CopyStatus: func(dst, src *Widget) { dst.Status = src.Status },
		SpecEqual:  func(a, b *Widget) bool { return a.Spec == b.Spec },
	}
}

// NewWidget returns a Widget named name in namespace ns with the given
// color and labels (pairs of key, value).
func NewWidget(ns, name, color string, labelPairs ...string) *Widget {
	w := &Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: WidgetSpec{Size: 1, Color: color}}
	if len(labelPairs) > 0 {
		w.Labels = map[string]string{}
		for i := 0; i+1 < len(labelPairs); i += 2 {
			w.Labels[labelPairs[i]] = labelPairs[i+1]
		}
	}
	return w
}
