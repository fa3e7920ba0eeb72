package patch

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// The rig of server/endpoints' strategic merge patch tests, as far as the
// patch meta sees it: its Go types (for the struct-tag meta) and their
// OpenAPI definitions.

// rig is the strategic merge patch tests' kind: a list merged by key only
// because it is +listType=map (ports), a list and a struct merged by
// their patchStrategy tags (tags, volumes, strategy), an atomic list
// (zones) and a map (params).
type rig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              rigSpec   `json:"spec,omitempty"`
	Status            rigStatus `json:"status,omitempty"`
}

type rigSpec struct {
	Size int32 `json:"size,omitempty"`
	// +listType=map
	// +listMapKey=name
	Ports    []rigPort         `json:"ports,omitempty"`
	Tags     []string          `json:"tags,omitempty" patchStrategy:"merge"`
	Volumes  []rigVolume       `json:"volumes,omitempty" patchStrategy:"merge,retainKeys" patchMergeKey:"name"`
	Zones    []string          `json:"zones,omitempty"`
	Strategy rigStrategy       `json:"strategy,omitempty" patchStrategy:"retainKeys"`
	Params   map[string]string `json:"params,omitempty"`
}

type rigPort struct {
	Name     string `json:"name"`
	Port     int32  `json:"port,omitempty"`
	Protocol string `json:"protocol,omitempty"`
}

type rigVolume struct {
	Name   string   `json:"name"`
	Size   int32    `json:"size,omitempty"`
	Mounts []string `json:"mounts,omitempty" patchStrategy:"merge"`
}

type rigStrategy struct {
	Type    string      `json:"type,omitempty"`
	Rolling *rigRolling `json:"rolling,omitempty"`
}

type rigRolling struct {
	MaxSurge int32 `json:"maxSurge,omitempty"`
}

type rigStatus struct {
	Phase string `json:"phase,omitempty"`
	Ready int32  `json:"ready,omitempty"`
}

const (
	rigPkg     = "github.com/apiloom/apiloom/server/endpoints/testapi/v1"
	objectMeta = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
)

// rigSpecJSON is the spec every rig of these tests starts with.
const rigSpecJSON = `{"size":2,"ports":[{"name":"a","port":80},{"name":"b","port":81}],"tags":["x"],` +
	`"volumes":[{"name":"v1","size":1,"mounts":["m1"]}],"zones":["z1","z2"],` +
	`"strategy":{"type":"Rolling","rolling":{"maxSurge":1}},"params":{"p":"1"}}`

// rigOriginal is a stored rig as strategicpatch sees it.
const rigOriginal = `{"apiVersion":"storagetest.apiloom.dev/v1","kind":"Rig",` +
	`"metadata":{"name":"r","namespace":"ns","labels":{"a":"1"},"finalizers":["example.com/f"]},"spec":` + rigSpecJSON + `,"status":{}}`

// rigDefinitions are the rig's OpenAPI definitions as the registry hands
// them on: openapi-gen's (extensions from the patchStrategy tags and the
// +listType markers) with the patch strategy of the +listType=map ports
// made explicit. ObjectMeta is cut down to the fields the tests patch.
func rigDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	obj := func(props map[string]spec.Schema) common.OpenAPIDefinition {
		return common.OpenAPIDefinition{Schema: spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: props}}}
	}
	str, i32 := *spec.StringProperty(), *spec.Int32Property()
	field := func(key string) spec.Schema {
		return spec.Schema{SchemaProps: spec.SchemaProps{Default: map[string]any{}, Ref: ref(key)}}
	}
	list := func(item spec.Schema, ext spec.Extensions) spec.Schema {
		return spec.Schema{
			VendorExtensible: spec.VendorExtensible{Extensions: ext},
			SchemaProps:      spec.SchemaProps{Type: []string{"array"}, Items: &spec.SchemaOrArray{Schema: &item}},
		}
	}
	strMap := spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"},
		AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: spec.StringProperty()}}}
	merge := spec.Extensions{"x-kubernetes-patch-strategy": "merge"}
	ptrTo := func(key string) spec.Schema { return spec.Schema{SchemaProps: spec.SchemaProps{Ref: ref(key)}} }
	return map[string]common.OpenAPIDefinition{
		rigPkg + ".rig": obj(map[string]spec.Schema{
			"apiVersion": str, "kind": str,
			"metadata": field(objectMeta), "spec": field(rigPkg + ".rigSpec"), "status": field(rigPkg + ".rigStatus"),
		}),
		rigPkg + ".rigSpec": obj(map[string]spec.Schema{
			"size": i32,
			"ports": list(field(rigPkg+".rigPort"), spec.Extensions{
				"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"name"},
				"x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "name",
			}),
			"tags": list(str, merge),
			"volumes": list(field(rigPkg+".rigVolume"), spec.Extensions{
				"x-kubernetes-patch-strategy": "merge,retainKeys", "x-kubernetes-patch-merge-key": "name",
			}),
			"zones":    list(str, nil),
			"strategy": field(rigPkg + ".rigStrategy"),
			"params":   strMap,
		}),
		rigPkg + ".rigPort":     obj(map[string]spec.Schema{"name": str, "port": i32, "protocol": str}),
		rigPkg + ".rigVolume":   obj(map[string]spec.Schema{"name": str, "size": i32, "mounts": list(str, merge)}),
		rigPkg + ".rigStrategy": obj(map[string]spec.Schema{"type": str, "rolling": ptrTo(rigPkg + ".rigRolling")}),
		rigPkg + ".rigRolling":  obj(map[string]spec.Schema{"maxSurge": i32}),
		rigPkg + ".rigStatus":   obj(map[string]spec.Schema{"phase": str, "ready": i32}),
		objectMeta: obj(map[string]spec.Schema{
			"name": str, "namespace": str, "uid": str, "resourceVersion": str, "generation": *spec.Int64Property(),
			"creationTimestamp": str, "labels": strMap, "annotations": strMap, "finalizers": list(str, merge),
		}),
	}
}
