package v2alpha1

import (
	"maps"

	"k8s.io/apimachinery/pkg/conversion"

	v1 "github.com/apiloom/apiloom/apis/example/v1"
)

// BackupScheduleAnnotation is where a Database stored as v1, which has no
// backupSchedule, keeps v2alpha1's spec.backupSchedule, so that the field
// survives a write through v2alpha1 and a read back, whatever version came
// between: Kubernetes' built-in kinds carried fields a version lacked the
// same way (autoscaling/v1's HorizontalPodAutoscaler kept v2's metrics in
// annotations). The key is the server's: a value a client puts there
// through v1 is v2alpha1's backupSchedule.
const BackupScheduleAnnotation = "v2alpha1.example.apiloom.dev/backupSchedule"

// Convert_v2alpha1_Database_To_v1_Database converts what conversion-gen
// can (every field but the spec's, see below) and keeps
// spec.backupSchedule in BackupScheduleAnnotation.
func Convert_v2alpha1_Database_To_v1_Database(in *Database, out *v1.Database, s conversion.Scope) error {
	if err := autoConvert_v2alpha1_Database_To_v1_Database(in, out, s); err != nil {
		return err
	}
	// in's annotations are in's: the generated code shares the map.
	_, had := in.Annotations[BackupScheduleAnnotation]
	if in.Spec.BackupSchedule != "" || had {
		a := maps.Clone(in.Annotations)
		delete(a, BackupScheduleAnnotation)
		if in.Spec.BackupSchedule != "" {
			if a == nil {
				a = map[string]string{}
			}
			a[BackupScheduleAnnotation] = in.Spec.BackupSchedule
		}
		out.Annotations = a
	}
	return nil
}

// Convert_v1_Database_To_v2alpha1_Database converts what conversion-gen
// can and moves BackupScheduleAnnotation back into spec.backupSchedule.
func Convert_v1_Database_To_v2alpha1_Database(in *v1.Database, out *Database, s conversion.Scope) error {
	if err := autoConvert_v1_Database_To_v2alpha1_Database(in, out, s); err != nil {
		return err
	}
	if v, ok := in.Annotations[BackupScheduleAnnotation]; ok {
		out.Spec.BackupSchedule = v
		a := maps.Clone(in.Annotations)
		delete(a, BackupScheduleAnnotation)
		if len(a) == 0 {
			a = nil
		}
		out.Annotations = a
	}
	return nil
}

// Convert_v2alpha1_DatabaseSpec_To_v1_DatabaseSpec renames engineVersion to
// version. backupSchedule has no place in v1's spec: the Database
// conversion keeps it in an annotation.
func Convert_v2alpha1_DatabaseSpec_To_v1_DatabaseSpec(in *DatabaseSpec, out *v1.DatabaseSpec, s conversion.Scope) error {
	if err := autoConvert_v2alpha1_DatabaseSpec_To_v1_DatabaseSpec(in, out, s); err != nil {
		return err
	}
	out.Version = in.EngineVersion
	return nil
}

// Convert_v1_DatabaseSpec_To_v2alpha1_DatabaseSpec renames version to
// engineVersion.
func Convert_v1_DatabaseSpec_To_v2alpha1_DatabaseSpec(in *v1.DatabaseSpec, out *DatabaseSpec, s conversion.Scope) error {
	if err := autoConvert_v1_DatabaseSpec_To_v2alpha1_DatabaseSpec(in, out, s); err != nil {
		return err
	}
	out.EngineVersion = in.Version
	return nil
}
