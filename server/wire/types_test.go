package wire

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// thing is a served-type lookalike for these tests; server packages may
// not import apis/.
type thing struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              thingSpec   `json:"spec,omitempty"`
	Status            thingStatus `json:"status,omitempty"`
}

type thingSpec struct {
	Engine   string            `json:"engine"`
	Replicas int32             `json:"replicas,omitempty"`
	Zones    []string          `json:"zones,omitempty"`
	Params   map[string]string `json:"params,omitempty"`
	Limit    *int64            `json:"limit,omitempty"`
}

type thingStatus struct {
	Phase      string             `json:"phase,omitempty"`
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

func (t *thing) DeepCopyObject() runtime.Object {
	c := *t
	t.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	c.Spec.Zones = append([]string(nil), t.Spec.Zones...)
	if t.Spec.Params != nil {
		c.Spec.Params = make(map[string]string, len(t.Spec.Params))
		for k, v := range t.Spec.Params {
			c.Spec.Params[k] = v
		}
	}
	if t.Spec.Limit != nil {
		l := *t.Spec.Limit
		c.Spec.Limit = &l
	}
	c.Status.Conditions = nil
	for _, cond := range t.Status.Conditions {
		c.Status.Conditions = append(c.Status.Conditions, *cond.DeepCopy())
	}
	return &c
}

var thingGVK = schema.GroupVersionKind{Group: "example.apiloom.dev", Version: "v1", Kind: "Thing"}

func sampleThing() *thing {
	created := metav1.Unix(1700000000, 0)
	return &thing{
		ObjectMeta: metav1.ObjectMeta{
			Name: "orders-db-primary", Namespace: "team-payments", UID: "5f1c9a2e-3b7d-4c1e-9f0a-2d8e6b4c1a77",
			ResourceVersion: "123456", Generation: 3, CreationTimestamp: created,
			Labels:      map[string]string{"app": "orders", "tier": "db", "team": "payments"},
			Annotations: map[string]string{"example.com/owner": "alice@example.com", "example.com/notes": "primary <db> & friends"},
		},
		Spec: thingSpec{Engine: "postgres", Replicas: 3, Zones: []string{"a", "b", "c"}, Params: map[string]string{"max_connections": "200"}},
		Status: thingStatus{Phase: "Ready", Conditions: []metav1.Condition{
			{Type: "Ready", Status: "True", Reason: "AllReplicasReady", Message: "3 of 3 replicas are ready", LastTransitionTime: created, ObservedGeneration: 3},
			{Type: "Degraded", Status: "False", Reason: "Healthy", Message: "no degradation", LastTransitionTime: created, ObservedGeneration: 3},
		}},
	}
}
