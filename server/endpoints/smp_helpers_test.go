package endpoints

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/endpoints/patch"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// rig is the strategic merge patch tests' kind: a list merged by key only
// because it is +listType=map (ports), a list and a struct merged by
// their patchStrategy tags (tags, volumes, strategy), an atomic list
// (zones), a map (params) and a status subresource.
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

func (r *rig) DeepCopyObject() runtime.Object {
	data, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	out := new(rig)
	if err := json.Unmarshal(data, out); err != nil {
		panic(err)
	}
	return out
}

const (
	rigsPath   = "/apis/storagetest.apiloom.dev/v1/namespaces/"
	rigPkg     = "github.com/apiloom/apiloom/server/endpoints/testapi/v1"
	objectMeta = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
)

func rigDefinition() *resource.Definition[*rig] {
	return &resource.Definition[*rig]{
		Info: resource.Info{
			Group: "storagetest.apiloom.dev", Version: "v1", Kind: "Rig", ListKind: "RigList",
			Plural: "rigs", Singular: "rig", Namespaced: true, HasStatus: true,
			OpenAPIName: rigPkg + ".rig",
			Schema:      rigSchema,
		},
		New:        func() *rig { return new(rig) },
		Fields:     func(r *rig) fields.Set { return resource.ObjectFields(r, true) },
		CopyStatus: func(dst, src *rig) { dst.Status = src.Status },
		SpecEqual: func(a, b *rig) bool {
			x, _ := json.Marshal(a.Spec)
			y, _ := json.Marshal(b.Spec)
			return string(x) == string(y)
		},
	}
}

// rigSchema is rig's schema as controller-gen writes it, with a default of
// 1 for spec.size and the list map of ports by name, whose name is
// required and port at least 1. It declares every field of the type, as
// a generated schema does: what it does not declare is pruned.
const rigSchema = `{"type":"object","properties":{
  "apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},
  "spec":{"type":"object","properties":{
    "size":{"type":"integer","format":"int32","default":1},
    "ports":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],
      "items":{"type":"object","required":["name"],"properties":{
        "name":{"type":"string"},"port":{"type":"integer","format":"int32","minimum":1},"protocol":{"type":"string"}}}},
    "tags":{"type":"array","items":{"type":"string"}},
    "volumes":{"type":"array","items":{"type":"object","required":["name"],"properties":{
      "name":{"type":"string"},"size":{"type":"integer","format":"int32"},"mounts":{"type":"array","items":{"type":"string"}}}}},
    "zones":{"type":"array","items":{"type":"string"}},
    "strategy":{"type":"object","properties":{"type":{"type":"string"},
      "rolling":{"type":"object","properties":{"maxSurge":{"type":"integer","format":"int32"}}}}},
    "params":{"type":"object","additionalProperties":{"type":"string"}}}},
  "status":{"type":"object","properties":{"phase":{"type":"string"},"ready":{"type":"integer","format":"int32"}}}}}`

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

// rigOriginal is a stored rig as strategicpatch sees it.
const rigOriginal = `{"apiVersion":"storagetest.apiloom.dev/v1","kind":"Rig",` +
	`"metadata":{"name":"r","namespace":"ns","labels":{"a":"1"},"finalizers":["example.com/f"]},"spec":` + rigSpecJSON + `,"status":{}}`

// rigEnv serves rigs from a real etcd, with the OpenAPI definitions
// (schemas) or, with schemas false, by struct tags alone.
type rigEnv struct {
	*env
	rigs storage.Interface[*rig]
}

func newRigEnv(t *testing.T, schemas bool, opts ...Option) *rigEnv {
	t.Helper()
	root := etcdtest.Start(t)
	c := storagetest.NewClient(t, root, "/smp-test")
	def := rigDefinition()
	store := storage.New(c, storage.ResourcePrefix("/registry", &def.Info), def)
	if schemas {
		opts = append(opts, WithSchemas(patch.NewSchemas(rigDefinitions)))
	}
	srv := httptest.NewServer(NewHandler(NewResource(def, store, opts...)))
	t.Cleanup(srv.Close)
	return &rigEnv{env: &env{t: t, ctx: t.Context(), srv: srv, client: c}, rigs: store}
}

// rig decodes the response as a Rig, failing unless it is code.
func (r response) rig(t *testing.T, code int) *rig {
	t.Helper()
	if r.code != code {
		t.Fatalf("got %d, want %d: %s", r.code, code, r.body)
	}
	var out rig
	if err := json.Unmarshal(r.body, &out); err != nil || out.Kind != "Rig" {
		t.Fatalf("not a Rig: %v: %s", err, r.body)
	}
	return &out
}

// createRig creates a rig from its JSON spec and status.
func (e *rigEnv) createRig(ns, name, spec string) *rig {
	e.t.Helper()
	body := `{"apiVersion":"storagetest.apiloom.dev/v1","kind":"Rig","metadata":{"name":"` + name + `","labels":{"a":"1"},"finalizers":["example.com/f"]},"spec":` + spec + `}`
	return e.do("POST", rigsPath+ns+"/rigs", "application/json", body).rig(e.t, 201)
}
