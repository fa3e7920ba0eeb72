package conversion

import (
	"reflect"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/randfill"
)

// filler fills every field, pointers included, with random values;
// strings are never empty, times are whole microseconds, as they are once serialized.
func filler(seed int64) *randfill.Filler {
	return randfill.NewWithSeed(seed).NilChance(0).NumElements(1, 2).Funcs(
		func(s *string, c randfill.Continue) { *s = "s" + strconv.FormatUint(c.Uint64(), 36) },
		func(t *metav1.Time, c randfill.Continue) { *t = metav1.Unix(c.Int63n(1<<32), 0) },
		func(t *metav1.MicroTime, c randfill.Continue) {
			*t = metav1.NewMicroTime(metav1.Unix(c.Int63n(1<<32), c.Int63n(1e6)*1e3).Time)
		},
	)
}

// TestEventsRoundTrip: every field of each form survives a trip through
// the other (the two types hold the same facts), and the fields the two
// name differently land where kube-apiserver's conversion puts them.
func TestEventsRoundTrip(t *testing.T) {
	for seed := range int64(50) {
		f := filler(seed)
		var core corev1.Event
		f.Fill(&core)
		core.TypeMeta = metav1.TypeMeta{}
		var ev eventsv1.Event
		if err := CoreV1EventToEventsV1Event(&core, &ev, nil); err != nil {
			t.Fatal(err)
		}
		var back corev1.Event
		if err := EventsV1EventToCoreV1Event(&ev, &back, nil); err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(core, back) {
			t.Fatalf("core round trip, seed %d:\n%+v\n%+v", seed, core, back)
		}

		var ev2 eventsv1.Event
		f.Fill(&ev2)
		ev2.TypeMeta = metav1.TypeMeta{}
		var core2 corev1.Event
		if err := EventsV1EventToCoreV1Event(&ev2, &core2, nil); err != nil {
			t.Fatal(err)
		}
		var back2 eventsv1.Event
		if err := CoreV1EventToEventsV1Event(&core2, &back2, nil); err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(ev2, back2) {
			t.Fatalf("events.k8s.io round trip, seed %d:\n%+v\n%+v", seed, ev2, back2)
		}
		// Every field of the target was set: a field one conversion
		// forgot would be left zero.
		if field := zeroField(reflect.ValueOf(core2), "Event"); field != "" {
			t.Fatalf("seed %d: core/v1 %s not set by the conversion", seed, field)
		}
		if field := zeroField(reflect.ValueOf(ev), "Event"); field != "" {
			t.Fatalf("seed %d: events.k8s.io/v1 %s not set by the conversion", seed, field)
		}
	}
}

// zeroField names the first zero-valued exported field of the struct v
// (TypeMeta aside), or "".
func zeroField(v reflect.Value, path string) string {
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if !f.IsExported() || f.Name == "TypeMeta" {
			continue
		}
		if v.Field(i).IsZero() {
			return path + "." + f.Name
		}
	}
	return ""
}

// TestEventsFieldMapping: the fields named differently, one by one.
func TestEventsFieldMapping(t *testing.T) {
	ts := metav1.Unix(100, 0)
	ev := eventsv1.Event{
		Regarding: corev1.ObjectReference{Name: "p"}, Note: "n",
		DeprecatedSource:         corev1.EventSource{Component: "c", Host: "h"},
		DeprecatedFirstTimestamp: ts, DeprecatedLastTimestamp: metav1.Unix(200, 0), DeprecatedCount: 3,
		ReportingController: "rc", Series: &eventsv1.EventSeries{Count: 4},
	}
	var core corev1.Event
	if err := EventsV1EventToCoreV1Event(&ev, &core, nil); err != nil {
		t.Fatal(err)
	}
	if core.InvolvedObject.Name != "p" || core.Message != "n" || core.Source.Host != "h" || !core.FirstTimestamp.Equal(&ts) ||
		core.LastTimestamp.Unix() != 200 || core.Count != 3 || core.ReportingController != "rc" || core.Series.Count != 4 {
		t.Fatalf("%+v", core)
	}
	core.Series.Count = 5
	if ev.Series.Count != 4 {
		t.Fatal("the series is shared with the input")
	}
}
