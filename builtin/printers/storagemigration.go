package printers

import (
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/resource"
)

// StorageVersionMigration is kube-apiserver's Table of migrations: the
// name, the group-resource migrated (resource.group) and the status, the
// type of the last of Running, Succeeded or Failed that is True
// ("Unknown" before the controller has written one).
var StorageVersionMigration = &resource.Printer[*svmv1.StorageVersionMigration]{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Description: metaDocs["name"]},
		{Name: "Resource", Type: "string", Description: "GroupResource to migrate"},
		{Name: "Status", Type: "string", Description: "Status of the migration"},
	},
	Cells: func(m *svmv1.StorageVersionMigration, _ time.Time) []any {
		status := "Unknown"
		for _, c := range m.Status.Conditions {
			if c.Status != metav1.ConditionTrue {
				continue
			}
			switch svmv1.MigrationConditionType(c.Type) {
			case svmv1.MigrationRunning, svmv1.MigrationSucceeded, svmv1.MigrationFailed:
				status = c.Type
			}
		}
		return []any{m.Name, m.Spec.Resource.String(), status}
	},
}
