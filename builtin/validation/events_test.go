package validation

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestEventName(t *testing.T) {
	for _, tc := range []struct {
		name   string
		prefix bool
		want   string // the one message; "" for none
	}{
		{"Bad_Name", false, ""},
		{"system:node.1a2b", false, ""},
		{"a/b", false, "may not contain '/'"},
		{"a%b", false, "may not contain '%'"},
		{"..", false, "may not be '..'"},
		{".", true, ""}, // a generateName may be "."
		{"a/", true, "may not contain '/'"},
	} {
		got := EventName(tc.name, tc.prefix)
		if (tc.want == "" && len(got) != 0) || (tc.want != "" && (len(got) != 1 || got[0] != tc.want)) {
			t.Errorf("EventName(%q, %t) = %q, want %q", tc.name, tc.prefix, got, tc.want)
		}
	}
}

// newEventsV1 is an events.k8s.io/v1 Event strict validation accepts.
func newEventsV1(name string) *eventsv1.Event {
	return &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: name, Namespace: "ns"},
		EventTime:           metav1.NewMicroTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		ReportingController: "example.com/ctl",
		ReportingInstance:   "i",
		Action:              "A",
		Reason:              "R",
		Type:                corev1.EventTypeNormal,
		Regarding:           corev1.ObjectReference{Kind: "ConfigMap", Namespace: "ns", Name: "cm"},
	}
}

func TestEventsV1EventNames(t *testing.T) {
	if errs := EventsV1Event(newEventsV1("ok.name"), nil); len(errs) != 0 {
		t.Fatalf("valid event: %v", errs)
	}
	// Created through events.k8s.io/v1, names are DNS subdomains.
	bad := newEventsV1("Bad_Name")
	bad.GenerateName = "Bad_"
	errs := EventsV1Event(bad, nil)
	want := []string{`metadata.generateName: Invalid value: "Bad_": a lowercase RFC 1123 subdomain`, `metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain`}
	if len(errs) != len(want) {
		t.Fatalf("causes:\n%s", causes(errs))
	}
	for i, w := range want {
		if !strings.HasPrefix(errs[i].Error(), w) {
			t.Errorf("cause %d: %s, want %q...", i, errs[i].Error(), w)
		}
	}
	// Updated through it, a name core/v1 accepted stays.
	if errs := EventsV1Event(newEventsV1("Bad_Name"), newEventsV1("Bad_Name")); len(errs) != 0 {
		t.Fatalf("update: %v", errs)
	}
	// core/v1 holds names to nothing but EventName.
	core := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name", Namespace: "ns"},
		InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: "ns", Name: "cm"}, Reason: "R", Type: corev1.EventTypeNormal}
	if errs := CoreV1Event(core, nil); len(errs) != 0 {
		t.Fatalf("core/v1: %v", errs)
	}
}

func TestEventsV1EventImmutableOnce(t *testing.T) {
	old := newEventsV1("p")
	changed := newEventsV1("p")
	changed.Reason = "Other"
	errs := EventsV1Event(changed, old)
	want := field.ErrorList{field.Invalid(field.NewPath("reason"), "Other", "field is immutable")}
	if causes(errs) != causes(want) {
		t.Fatalf("causes:\n%swant:\n%s", causes(errs), causes(want))
	}
}
