package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Thing is a resource whose package names no group.
//
// +genclient
type Thing struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}
