package printers

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/apiloom/apiloom/builtin/conversion"
	"github.com/apiloom/apiloom/server/resource"
)

// eventDocs are the descriptions kube-apiserver gives the columns.
var eventDocs = corev1.Event{}.SwaggerDoc()

// eventColumns are kube-apiserver's Event columns, in both groups: kubectl
// shows LAST SEEN, TYPE, REASON, OBJECT and MESSAGE, and the rest with -o
// wide.
var eventColumns = []metav1.TableColumnDefinition{
	{Name: "Last Seen", Type: "string", Description: eventDocs["lastTimestamp"]},
	{Name: "Type", Type: "string", Description: eventDocs["type"]},
	{Name: "Reason", Type: "string", Description: eventDocs["reason"]},
	{Name: "Object", Type: "string", Description: eventDocs["involvedObject"]},
	{Name: "Subobject", Type: "string", Priority: 1, Description: corev1.ObjectReference{}.SwaggerDoc()["fieldPath"]},
	{Name: "Source", Type: "string", Priority: 1, Description: eventDocs["source"]},
	{Name: "Message", Type: "string", Description: eventDocs["message"]},
	{Name: "First Seen", Type: "string", Priority: 1, Description: eventDocs["firstTimestamp"]},
	{Name: "Count", Type: "string", Priority: 1, Description: eventDocs["count"]},
	{Name: "Name", Type: "string", Priority: 1, Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
}

// CoreV1Event is the Table of core/v1 Events.
var CoreV1Event = &resource.Printer[*corev1.Event]{Columns: eventColumns, Cells: eventCells}

// EventsV1Event is the Table of events.k8s.io/v1 Events: the same as
// core's, of the same objects.
var EventsV1Event = &resource.Printer[*eventsv1.Event]{Columns: eventColumns, Cells: func(e *eventsv1.Event, now time.Time) []any {
	var core corev1.Event
	_ = conversion.EventsV1EventToCoreV1Event(e, &core, nil) // never fails
	return eventCells(&core, now)
}}

// eventCells are an Event's cells as kube-apiserver prints them: first and
// last seen from the old timestamps or else eventTime and the series, the
// count (1 for a single new-style event), the object as kind/name.
func eventCells(e *corev1.Event, now time.Time) []any {
	since := func(t time.Time) string {
		if t.IsZero() {
			return "<unknown>"
		}
		return duration.HumanDuration(now.Sub(t))
	}
	first := since(e.FirstTimestamp.Time)
	if e.FirstTimestamp.IsZero() {
		first = since(e.EventTime.Time)
	}
	last := since(e.LastTimestamp.Time)
	if e.LastTimestamp.IsZero() {
		last = first
	}
	count := e.Count
	switch {
	case e.Series != nil:
		last, count = since(e.Series.LastObservedTime.Time), e.Series.Count
	case count == 0:
		count = 1
	}
	target := strings.ToLower(e.InvolvedObject.Kind)
	if e.InvolvedObject.Name != "" {
		target += "/" + e.InvolvedObject.Name
	}
	return []any{last, e.Type, e.Reason, target, e.InvolvedObject.FieldPath, eventSource(e),
		strings.TrimSpace(e.Message), first, int64(count), e.Name}
}

// eventSource is "component, host" of the old fields, or else of the
// reporting controller and instance.
func eventSource(e *corev1.Event) string {
	component, instance := e.Source.Component, e.Source.Host
	if component == "" {
		component = e.ReportingController
	}
	if instance == "" {
		instance = e.ReportingInstance
	}
	if instance == "" {
		return component
	}
	return component + ", " + instance
}
