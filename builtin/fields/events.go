package fields

import corev1 "k8s.io/api/core/v1"

// EventSource is a core/v1 Event's "source" field-selector value: the
// reporting component of an event written through core/v1
// (source.component), or else the reporting controller of one written
// through events.k8s.io/v1, as kube-apiserver selects it.
func EventSource(e *corev1.Event) string {
	if e.Source.Component != "" {
		return e.Source.Component
	}
	return e.ReportingController
}
