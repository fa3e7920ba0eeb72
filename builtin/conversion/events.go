package conversion

import (
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/conversion"
)

// EventsV1EventToCoreV1Event converts an events.k8s.io/v1 Event to the
// core/v1 Event it is stored as: regarding is involvedObject, note is
// message, and the deprecated* fields are core's source, firstTimestamp,
// lastTimestamp and count; every other field has the same name and
// meaning in both.
func EventsV1EventToCoreV1Event(in *eventsv1.Event, out *corev1.Event, _ conversion.Scope) error {
	out.ObjectMeta = in.ObjectMeta
	out.InvolvedObject = in.Regarding
	out.Reason = in.Reason
	out.Message = in.Note
	out.Source = in.DeprecatedSource
	out.FirstTimestamp = in.DeprecatedFirstTimestamp
	out.LastTimestamp = in.DeprecatedLastTimestamp
	out.Count = in.DeprecatedCount
	out.Type = in.Type
	out.EventTime = in.EventTime
	out.Series = nil
	if s := in.Series; s != nil {
		out.Series = &corev1.EventSeries{Count: s.Count, LastObservedTime: s.LastObservedTime}
	}
	out.Action = in.Action
	out.Related = in.Related
	out.ReportingController = in.ReportingController
	out.ReportingInstance = in.ReportingInstance
	return nil
}

// CoreV1EventToEventsV1Event converts a stored core/v1 Event to its
// events.k8s.io/v1 form, the inverse of EventsV1EventToCoreV1Event.
func CoreV1EventToEventsV1Event(in *corev1.Event, out *eventsv1.Event, _ conversion.Scope) error {
	out.ObjectMeta = in.ObjectMeta
	out.Regarding = in.InvolvedObject
	out.Reason = in.Reason
	out.Note = in.Message
	out.DeprecatedSource = in.Source
	out.DeprecatedFirstTimestamp = in.FirstTimestamp
	out.DeprecatedLastTimestamp = in.LastTimestamp
	out.DeprecatedCount = in.Count
	out.Type = in.Type
	out.EventTime = in.EventTime
	out.Series = nil
	if s := in.Series; s != nil {
		out.Series = &eventsv1.EventSeries{Count: s.Count, LastObservedTime: s.LastObservedTime}
	}
	out.Action = in.Action
	out.Related = in.Related
	out.ReportingController = in.ReportingController
	out.ReportingInstance = in.ReportingInstance
	return nil
}
