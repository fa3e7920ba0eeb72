// Package v2alpha1 is a second version of the example group's Database: its
// spec renames version to engineVersion and adds backupSchedule, which v1
// does not have. Objects are stored as v1 (+kubebuilder:storageversion
// there); conversion-gen writes the conversions between the two where the
// fields match, conversion.go the rest.
//
// Only spec.engine is selectable here, not v1's spec.region too: a CRD whose
// versions have the same selectable fields but different schemas is
// refused by kube-apiserver's validation, which sees the fields hoisted to
// spec.selectableFields without a spec.validation.
//
// +groupName=example.apiloom.dev
// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:conversion-gen=github.com/apiloom/apiloom/apis/example/v1
package v2alpha1
