package validation

import (
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apiloom/apiloom/builtin/conversion"
)

// Upstream's length limits of an Event's fields.
const (
	reportingInstanceLengthLimit = 128
	actionLengthLimit            = 128
	reasonLengthLimit            = 128
	noteLengthLimit              = 1024
)

// EventName is the rule of Event names (resource.Definition.ValidateName
// of both versions): kube-apiserver's Event strategy states none, so its
// generic metadata pass applies, which asks only that a name can be a URL
// path segment (not ".", "..", no "/" or "%"; a generateName only no "/"
// or "%"). A core/v1 Event may be named "Bad_Name"; events.k8s.io/v1 adds
// the DNS-subdomain rule on create only (EventsV1Event), so an update
// through it of an Event created through core/v1 keeps such a name.
func EventName(name string, prefix bool) []string {
	if prefix {
		return content.IsPathSegmentPrefix(name)
	}
	return content.IsPathSegmentName(name)
}

// CoreV1Event: an Event written through core/v1 gets kube-apiserver's
// legacy rules only (for compatibility with old clients): its namespace
// agrees with involvedObject's and, once it has an eventTime, it names its
// reporting controller and instance, action and reason within their
// limits. Paths are core/v1's, as upstream's.
func CoreV1Event(obj, _ *corev1.Event) field.ErrorList {
	return legacyEvent(obj, "reportingComponent")
}

// EventsV1Event: an Event written through events.k8s.io/v1 gets the legacy
// rules and kube-apiserver's strict ones: on create a name (and
// generateName) that is a DNS subdomain, an eventTime, a type Normal or
// Warning, a series of at least 2 with its lastObservedTime, and none of
// the deprecated core fields; on update every field but the series and
// metadata unchanged. Upstream checks the stored (core) form,
// so paths name core/v1's fields (involvedObject, message, ...).
func EventsV1Event(obj, old *eventsv1.Event) field.ErrorList {
	var ev, oldEv corev1.Event
	// The conversions never fail.
	_ = conversion.EventsV1EventToCoreV1Event(obj, &ev, nil)
	errs := legacyEvent(&ev, "reportingController")
	if old == nil {
		return append(errs, strictEventCreate(&ev)...)
	}
	_ = conversion.EventsV1EventToCoreV1Event(old, &oldEv, nil)
	return append(errs, strictEventUpdate(&ev, &oldEv)...)
}

// legacyEvent are the rules every Event passes; reportingField is how the
// request's version names reportingController.
func legacyEvent(e *corev1.Event, reportingField string) field.ErrorList {
	var errs field.ErrorList
	nsPath := field.NewPath("involvedObject", "namespace")
	if e.EventTime.IsZero() {
		// Old events: the namespace agrees with the involved object's (or
		// is "default" for one without, as old clients wrote).
		if e.InvolvedObject.Namespace == "" {
			if e.Namespace != metav1.NamespaceNone && e.Namespace != metav1.NamespaceDefault {
				errs = append(errs, field.Invalid(nsPath, e.InvolvedObject.Namespace, "does not match event.namespace"))
			}
		} else if e.Namespace != e.InvolvedObject.Namespace {
			errs = append(errs, field.Invalid(nsPath, e.InvolvedObject.Namespace, "does not match event.namespace"))
		}
		return errs
	}
	if e.InvolvedObject.Namespace == "" && e.Namespace != metav1.NamespaceDefault && e.Namespace != metav1.NamespaceSystem {
		errs = append(errs, field.Invalid(nsPath, e.InvolvedObject.Namespace, "does not match event.namespace"))
	}
	reporting := field.NewPath(reportingField)
	if e.ReportingController == "" {
		errs = append(errs, field.Required(reporting, ""))
	}
	for _, msg := range validation.IsQualifiedName(e.ReportingController) {
		errs = append(errs, field.Invalid(reporting, e.ReportingController, msg))
	}
	errs = append(errs, requiredWithin(e.ReportingInstance, "reportingInstance", reportingInstanceLengthLimit)...)
	errs = append(errs, requiredWithin(e.Action, "action", actionLengthLimit)...)
	errs = append(errs, requiredWithin(e.Reason, "reason", reasonLengthLimit)...)
	if len(e.Message) > noteLengthLimit {
		errs = append(errs, field.Invalid(field.NewPath("message"), "", fmt.Sprintf("can have at most %v characters", noteLengthLimit)))
	}
	return errs
}

// requiredWithin: value is set and at most limit bytes long.
func requiredWithin(value, name string, limit int) field.ErrorList {
	var errs field.ErrorList
	if value == "" {
		errs = append(errs, field.Required(field.NewPath(name), ""))
	}
	if len(value) > limit {
		errs = append(errs, field.Invalid(field.NewPath(name), "", fmt.Sprintf("can have at most %v characters", limit)))
	}
	return errs
}

// strictEventCreate are the events.k8s.io/v1 rules of a new Event, in
// upstream's order. Upstream validates the whole metadata here with the
// DNS-subdomain name rule; the server's metadata pass (with EventName)
// checks the rest of it, so only the names are checked again here.
//
// Upstream runs its generic metadata pass only when this one found
// nothing, so a name that is not a path segment ("a/b") gets this one's
// cause alone there; here it also gets EventName's.
func strictEventCreate(e *corev1.Event) field.ErrorList {
	var errs field.ErrorList
	meta := field.NewPath("metadata")
	if e.GenerateName != "" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(e.GenerateName, true) {
			errs = append(errs, field.Invalid(meta.Child("generateName"), e.GenerateName, msg))
		}
	}
	if e.Name != "" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(e.Name, false) {
			errs = append(errs, field.Invalid(meta.Child("name"), e.Name, msg))
		}
	}
	errs = append(errs, eventSeries(e)...)
	if e.EventTime.IsZero() {
		errs = append(errs, field.Required(field.NewPath("eventTime"), ""))
	}
	if e.Type != corev1.EventTypeNormal && e.Type != corev1.EventTypeWarning {
		errs = append(errs, field.Invalid(field.NewPath("type"), "", fmt.Sprintf("has invalid value: %v", e.Type)))
	}
	if !e.FirstTimestamp.IsZero() {
		errs = append(errs, field.Invalid(field.NewPath("firstTimestamp"), "", "needs to be unset"))
	}
	if !e.LastTimestamp.IsZero() {
		errs = append(errs, field.Invalid(field.NewPath("lastTimestamp"), "", "needs to be unset"))
	}
	if e.Count != 0 {
		errs = append(errs, field.Invalid(field.NewPath("count"), "", "needs to be unset"))
	}
	if e.Source.Component != "" || e.Source.Host != "" {
		errs = append(errs, field.Invalid(field.NewPath("source"), "", "needs to be unset"))
	}
	return errs
}

// strictEventUpdate are the events.k8s.io/v1 rules of an update: a
// changed series is checked, everything else but metadata is immutable
// (eventTime to the microsecond its serialization keeps). Upstream checks
// reason twice (after count too), but its strategy's declarative
// validation pass filters the list through field.ErrorList.Filter, which
// drops an error equal to one before it, so a changed reason is one cause.
func strictEventUpdate(e, old *corev1.Event) field.ErrorList {
	var errs field.ErrorList
	if !reflect.DeepEqual(e.Series, old.Series) {
		errs = append(errs, eventSeries(e)...)
	}
	same := func(v, o any, name string) {
		errs = append(errs, apivalidation.ValidateImmutableField(v, o, field.NewPath(name))...)
	}
	same(e.InvolvedObject, old.InvolvedObject, "involvedObject")
	same(e.Reason, old.Reason, "reason")
	same(e.Message, old.Message, "message")
	same(e.Source, old.Source, "source")
	same(e.FirstTimestamp, old.FirstTimestamp, "firstTimestamp")
	same(e.LastTimestamp, old.LastTimestamp, "lastTimestamp")
	same(e.Count, old.Count, "count")
	same(e.Type, old.Type, "type")
	if !e.EventTime.Truncate(time.Microsecond).UTC().Equal(old.EventTime.Truncate(time.Microsecond).UTC()) {
		same(e.EventTime, old.EventTime, "eventTime")
	}
	same(e.Action, old.Action, "action")
	same(e.Related, old.Related, "related")
	same(e.ReportingController, old.ReportingController, "reportingController")
	same(e.ReportingInstance, old.ReportingInstance, "reportingInstance")
	return errs
}

// eventSeries: a series counts at least 2 and has its last observation.
func eventSeries(e *corev1.Event) field.ErrorList {
	var errs field.ErrorList
	if s := e.Series; s != nil {
		if s.Count < 2 {
			errs = append(errs, field.Invalid(field.NewPath("series.count"), "", "should be at least 2"))
		}
		if s.LastObservedTime.IsZero() {
			errs = append(errs, field.Required(field.NewPath("series.lastObservedTime"), ""))
		}
	}
	return errs
}
