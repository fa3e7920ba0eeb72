package v2alpha1

import (
	"math/rand"
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/diff"

	v1 "github.com/apiloom/apiloom/apis/example/v1"
)

// TestConvertRenamesAndKeeps: engineVersion is v1's version; backupSchedule
// travels in BackupScheduleAnnotation and nowhere else; the input is not
// changed (its annotations map is shared with nobody).
func TestConvertRenamesAndKeeps(t *testing.T) {
	in := &Database{
		ObjectMeta: metav1.ObjectMeta{Name: "orders", Annotations: map[string]string{"team": "payments"}},
		Spec:       DatabaseSpec{Engine: "postgres", EngineVersion: "16.4", BackupSchedule: "0 3 * * *"},
	}
	before := in.DeepCopy()
	var stored v1.Database
	if err := Convert_v2alpha1_Database_To_v1_Database(in, &stored, nil); err != nil {
		t.Fatal(err)
	}
	if stored.Spec.Version != "16.4" || stored.Annotations[BackupScheduleAnnotation] != "0 3 * * *" || stored.Annotations["team"] != "payments" {
		t.Fatalf("stored: %+v %v", stored.Spec, stored.Annotations)
	}
	if !apiequality.Semantic.DeepEqual(in, before) {
		t.Fatalf("input changed: %s", diff.Diff(before, in))
	}
	var back Database
	if err := Convert_v1_Database_To_v2alpha1_Database(&stored, &back, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := back.Annotations[BackupScheduleAnnotation]; ok || back.Spec.BackupSchedule != "0 3 * * *" || back.Spec.EngineVersion != "16.4" {
		t.Fatalf("back: %+v %v", back.Spec, back.Annotations)
	}
	if stored.Annotations[BackupScheduleAnnotation] == "" {
		t.Fatal("converting back changed the stored object's annotations")
	}

	// Without a schedule, no annotation; a stray one written through v2alpha1 goes.
	in = &Database{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{BackupScheduleAnnotation: "x"}}}
	stored = v1.Database{}
	if err := Convert_v2alpha1_Database_To_v1_Database(in, &stored, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := stored.Annotations[BackupScheduleAnnotation]; ok || in.Annotations[BackupScheduleAnnotation] != "x" {
		t.Fatalf("stray annotation: stored %v, input %v", stored.Annotations, in.Annotations)
	}
}

// TestRoundTripFuzz is Kubernetes' round-trip test for conversions, on
// randfill's random objects (with apimachinery's ObjectMeta fuzzers):
// storage (v1) → v2alpha1 → v1 is the identity, and so is v2alpha1 → v1
// → v2alpha1, so a field of either version survives the other.
func TestRoundTripFuzz(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{v1.AddToScheme, AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	seed := rand.Int63()
	f := fuzzer.FuzzerFor(metafuzzer.Funcs, rand.NewSource(seed), serializer.NewCodecFactory(scheme))
	for i := 0; i < 2000; i++ {
		var s v1.Database
		f.Fill(&s)
		var o Database
		if err := Convert_v1_Database_To_v2alpha1_Database(&s, &o, nil); err != nil {
			t.Fatal(err)
		}
		var s2 v1.Database
		if err := Convert_v2alpha1_Database_To_v1_Database(&o, &s2, nil); err != nil {
			t.Fatal(err)
		}
		if !apiequality.Semantic.DeepEqual(&s, &s2) {
			t.Fatalf("seed %d, v1 → v2alpha1 → v1 changed it:\n%s", seed, diff.Diff(&s, &s2))
		}

		var o1 Database
		f.Fill(&o1)
		var st v1.Database
		if err := Convert_v2alpha1_Database_To_v1_Database(&o1, &st, nil); err != nil {
			t.Fatal(err)
		}
		var o2 Database
		if err := Convert_v1_Database_To_v2alpha1_Database(&st, &o2, nil); err != nil {
			t.Fatal(err)
		}
		if !apiequality.Semantic.DeepEqual(&o1, &o2) {
			t.Fatalf("seed %d, v2alpha1 → v1 → v2alpha1 changed it:\n%s", seed, diff.Diff(&o1, &o2))
		}
	}
}
