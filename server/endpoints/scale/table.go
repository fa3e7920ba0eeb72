package scale

import (
	"bytes"
	"encoding/json"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/endpoints/tableconvert"
	"github.com/apiloom/apiloom/server/resource"
)

// columns are the columns of a Scale's Table, as kube-apiserver has
// them for a custom resource's scale subresource.
var columns = func() *tableconvert.Columns {
	c, err := tableconvert.NewColumns(&resource.Info{Group: GVK.Group, Version: GVK.Version, Kind: GVK.Kind, PrintColumns: []resource.PrintColumn{
		{Name: "Desired", Type: "integer", JSONPath: ".spec.replicas", Description: "Number of desired replicas"},
		{Name: "Available", Type: "integer", JSONPath: ".status.replicas", Description: "Number of actual replicas"},
		{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp", Description: tableconvert.MetadataDocs["creationTimestamp"]},
	}})
	if err != nil {
		panic(err)
	}
	return c
}()

// Table is scale as a one-row Table, as kube-apiserver has it for the
// scale subresource, the row carrying the Scale as ?includeObject= asks
// (endpoints' tables render objects the same way); now is when its age is
// measured from.
func Table(scale *autoscalingv1.Scale, out negotiation.Output, now time.Time) (*metav1.Table, error) {
	var buf bytes.Buffer
	cells, err := columns.Cells(scale, now, &buf)
	if err != nil {
		return nil, err
	}
	row := metav1.TableRow{Cells: cells}
	switch out.Table.IncludeObject {
	case metav1.IncludeObject:
		row.Object.Raw, err = json.Marshal(scale)
	case metav1.IncludeNone:
	default:
		row.Object.Raw, err = json.Marshal(out.PartialObject(scale))
	}
	if err != nil {
		return nil, err
	}
	return &metav1.Table{
		TypeMeta:          metav1.TypeMeta{Kind: "Table", APIVersion: out.MetaAPIVersion()},
		ListMeta:          metav1.ListMeta{ResourceVersion: scale.ResourceVersion},
		ColumnDefinitions: columns.Definitions(),
		Rows:              []metav1.TableRow{row},
	}, nil
}
