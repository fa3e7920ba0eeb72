package discovery_test

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/apiloom/apiloom/server/resource"
)

// The server must not import generated/ or apis/, so its tests describe
// their own small API the way openapi-gen would: types keyed by Go path,
// apimachinery types keyed by model name, struct fields as refs with a
// description and an empty default (which OpenAPI v3 must wrap in allOf),
// and accurate Dependencies.

const (
	group      = "test.apiloom.dev"
	otherGroup = "other.apiloom.dev"
	pkgV1      = "github.com/apiloom/apiloom/server/discovery/testapi/v1"
	pkgV1beta1 = "github.com/apiloom/apiloom/server/discovery/testapi/v1beta1"
	pkgOther   = "github.com/apiloom/apiloom/server/discovery/otherapi/v1alpha1"
)

var (
	objectMetaKey    = metav1.ObjectMeta{}.OpenAPIModelName()
	listMetaKey      = metav1.ListMeta{}.OpenAPIModelName()
	timeKey          = metav1.Time{}.OpenAPIModelName()
	conditionKey     = metav1.Condition{}.OpenAPIModelName()
	statusKey        = metav1.Status{}.OpenAPIModelName()
	statusDetailsKey = metav1.StatusDetails{}.OpenAPIModelName()
	statusCauseKey   = metav1.StatusCause{}.OpenAPIModelName()
	deleteOptionsKey = metav1.DeleteOptions{}.OpenAPIModelName()
	preconditionsKey = metav1.Preconditions{}.OpenAPIModelName()
	patchKey         = metav1.Patch{}.OpenAPIModelName()
	scaleKey         = autoscalingv1.Scale{}.OpenAPIModelName()
	apiGroupKey      = metav1.APIGroup{}.OpenAPIModelName() // defined, but no resource needs it
)

// Resources of the test API: a namespaced Widget with status in two
// versions, a cluster-scoped Gadget, and a Thing in a second group.
func widgetV1() *resource.Info {
	return &resource.Info{
		Group: group, Version: "v1", Kind: "Widget", ListKind: "WidgetList",
		Plural: "widgets", Singular: "widget", Namespaced: true,
		ShortNames: []string{"wd"}, Categories: []string{"all"},
		HasStatus: true, SelectableFields: []string{"spec.color"},
		OpenAPIName: pkgV1 + ".Widget",
	}
}

func widgetV1beta1() *resource.Info {
	return &resource.Info{
		Group: group, Version: "v1beta1", Kind: "Widget", ListKind: "WidgetList",
		Plural: "widgets", Singular: "widget", Namespaced: true,
		ShortNames: []string{"wd"}, HasStatus: true,
		OpenAPIName: pkgV1beta1 + ".Widget",
	}
}

func gadgetV1() *resource.Info {
	return &resource.Info{
		Group: group, Version: "v1", Kind: "Gadget", ListKind: "GadgetList",
		Plural: "gadgets", Singular: "gadget", ShortNames: []string{"gd"},
		OpenAPIName: pkgV1 + ".Gadget",
	}
}

func thingV1alpha1() *resource.Info {
	return &resource.Info{
		Group: otherGroup, Version: "v1alpha1", Kind: "Thing", ListKind: "ThingList",
		Plural: "things", Singular: "thing", Namespaced: true,
		OpenAPIName: pkgOther + ".Thing",
	}
}

func testInfos() []*resource.Info {
	return []*resource.Info{widgetV1(), gadgetV1(), widgetV1beta1(), thingV1alpha1()}
}

// testDefinitions is the test API's common.GetOpenAPIDefinitions.
func testDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	str := func(desc string) spec.Schema { return *spec.StringProperty().WithDescription(desc) }
	i32 := func(desc string) spec.Schema { return *spec.Int32Property().WithDescription(desc) }
	i64 := func(desc string) spec.Schema { return *spec.Int64Property().WithDescription(desc) }
	obj := func(desc string, props map[string]spec.Schema, required ...string) spec.Schema {
		return spec.Schema{SchemaProps: spec.SchemaProps{
			Description: desc, Type: []string{"object"}, Properties: props, Required: required,
		}}
	}
	// field is a struct-typed field, as openapi-gen writes it.
	field := func(desc, key string) spec.Schema {
		return spec.Schema{SchemaProps: spec.SchemaProps{Description: desc, Default: map[string]any{}, Ref: ref(key)}}
	}
	array := func(desc string, item spec.Schema) spec.Schema {
		return spec.Schema{SchemaProps: spec.SchemaProps{
			Description: desc, Type: []string{"array"}, Items: &spec.SchemaOrArray{Schema: &item},
		}}
	}
	kind := func(desc, specKey, statusKey string) common.OpenAPIDefinition {
		props := map[string]spec.Schema{
			"kind":       str("Kind is a string value representing the REST resource this object represents."),
			"apiVersion": str("APIVersion defines the versioned schema of this representation of an object."),
			"metadata":   field("Standard object's metadata.", objectMetaKey),
			"spec":       field("Spec is the desired state.", specKey),
		}
		deps := []string{objectMetaKey, specKey}
		if statusKey != "" {
			props["status"] = field("Status is the observed state.", statusKey)
			deps = append(deps, statusKey)
		}
		return common.OpenAPIDefinition{Schema: obj(desc, props), Dependencies: deps}
	}
	list := func(desc, itemKey string) common.OpenAPIDefinition {
		return common.OpenAPIDefinition{
			Schema: obj(desc, map[string]spec.Schema{
				"kind":       str("Kind of the list."),
				"apiVersion": str("APIVersion of the list."),
				"metadata":   field("Standard list metadata.", listMetaKey),
				"items":      array("Items are the objects.", field("", itemKey)),
			}, "items"),
			Dependencies: []string{listMetaKey, itemKey},
		}
	}

	return map[string]common.OpenAPIDefinition{
		pkgV1 + ".Widget":     kind("Widget is a thing with a color.", pkgV1+".WidgetSpec", pkgV1+".WidgetStatus"),
		pkgV1 + ".WidgetList": list("WidgetList is a list of Widgets.", pkgV1+".Widget"),
		pkgV1 + ".WidgetSpec": {Schema: obj("WidgetSpec is the desired state of a Widget.", map[string]spec.Schema{
			"color": str("Color is the widget's color, for example \"red\"."),
			"size":  i32("Size in centimetres."),
		}, "color")},
		pkgV1 + ".WidgetStatus": {
			Schema: obj("WidgetStatus is the observed state of a Widget.", map[string]spec.Schema{
				"phase":      str("Phase is a one-word summary."),
				"conditions": array("Conditions are the standard conditions.", field("", conditionKey)),
			}),
			Dependencies: []string{conditionKey},
		},
		pkgV1 + ".Gadget":     kind("Gadget is cluster-scoped.", pkgV1+".GadgetSpec", ""),
		pkgV1 + ".GadgetList": list("GadgetList is a list of Gadgets.", pkgV1+".Gadget"),
		pkgV1 + ".GadgetSpec": {Schema: obj("GadgetSpec describes a Gadget.", map[string]spec.Schema{
			"label": str("Label names the gadget."),
		})},

		pkgV1beta1 + ".Widget":     kind("Widget, beta.", pkgV1beta1+".WidgetSpec", pkgV1beta1+".WidgetStatus"),
		pkgV1beta1 + ".WidgetList": list("WidgetList, beta.", pkgV1beta1+".Widget"),
		pkgV1beta1 + ".WidgetSpec": {Schema: obj("WidgetSpec, beta.", map[string]spec.Schema{
			"colour": str("Colour, as it was spelt in beta."),
		})},
		pkgV1beta1 + ".WidgetStatus": {Schema: obj("WidgetStatus, beta.", map[string]spec.Schema{
			"phase": str("Phase."),
		})},

		pkgOther + ".Thing":     kind("Thing is in another group.", pkgOther+".ThingSpec", ""),
		pkgOther + ".ThingList": list("ThingList is a list of Things.", pkgOther+".Thing"),
		pkgOther + ".ThingSpec": {Schema: obj("ThingSpec.", map[string]spec.Schema{"n": i64("N.")})},

		objectMetaKey: {
			Schema: obj("ObjectMeta is metadata that all persisted resources must have.", map[string]spec.Schema{
				"name":              str("Name must be unique within a namespace."),
				"generateName":      str("GenerateName is an optional prefix."),
				"namespace":         str("Namespace defines the space within which each name must be unique."),
				"uid":               str("UID is the unique in time and space value for this object."),
				"resourceVersion":   str("An opaque value that represents the internal version of this object."),
				"generation":        i64("A sequence number representing a specific generation of the desired state."),
				"creationTimestamp": field("CreationTimestamp is when this object was created.", timeKey),
				"deletionTimestamp": {SchemaProps: spec.SchemaProps{Description: "Deletion time.", Ref: ref(timeKey)}},
				"labels":            *spec.MapProperty(spec.StringProperty()).WithDescription("Map of string keys and values."),
				"annotations":       *spec.MapProperty(spec.StringProperty()).WithDescription("Unstructured key value map."),
				"finalizers":        array("Must be empty before the object is deleted.", *spec.StringProperty()),
			}),
			Dependencies: []string{timeKey},
		},
		scaleKey: {
			Schema: obj("Scale represents a scaling request for a resource.", map[string]spec.Schema{
				"kind":       str("Kind."),
				"apiVersion": str("APIVersion."),
				"metadata":   field("Standard object metadata.", objectMetaKey),
				"spec":       obj("spec defines the behavior of the scale.", map[string]spec.Schema{"replicas": i32("replicas is the desired number of instances.")}),
				"status":     obj("status is the current status of the scale.", map[string]spec.Schema{"replicas": i32("replicas is the actual number of observed instances."), "selector": str("selector is the label query.")}, "replicas"),
			}),
			Dependencies: []string{objectMetaKey},
		},
		listMetaKey: {Schema: obj("ListMeta describes metadata that synthetic resources must have.", map[string]spec.Schema{
			"resourceVersion":    str("String that identifies the server's internal version of this object."),
			"continue":           str("continue may be set if the user set a limit."),
			"remainingItemCount": i64("remainingItemCount is the number of subsequent items in the list."),
		})},
		timeKey: {Schema: spec.Schema{SchemaProps: spec.SchemaProps{
			Description: "Time is a wrapper around time.Time.", Type: []string{"string"}, Format: "date-time",
		}}},
		conditionKey: {
			Schema: obj("Condition contains details for one aspect of the current state.", map[string]spec.Schema{
				"type":               str("type of condition in CamelCase."),
				"status":             str("status of the condition, one of True, False, Unknown."),
				"observedGeneration": i64("observedGeneration represents the .metadata.generation."),
				"lastTransitionTime": field("lastTransitionTime is the last time the condition changed.", timeKey),
				"reason":             str("reason contains a programmatic identifier."),
				"message":            str("message is a human readable message."),
			}, "type", "status", "lastTransitionTime", "reason", "message"),
			Dependencies: []string{timeKey},
		},
		statusKey: {
			Schema: obj("Status is a return value for calls that don't return other objects.", map[string]spec.Schema{
				"kind":       str("Kind."),
				"apiVersion": str("APIVersion."),
				"metadata":   field("Standard list metadata.", listMetaKey),
				"status":     str("Status of the operation."),
				"message":    str("A human-readable description of the status of this operation."),
				"reason":     str("A machine-readable description of why this operation is in the Failure status."),
				"details":    {SchemaProps: spec.SchemaProps{Description: "Extended data.", Ref: ref(statusDetailsKey)}},
				"code":       i32("Suggested HTTP return code for this status."),
			}),
			Dependencies: []string{listMetaKey, statusDetailsKey},
		},
		statusDetailsKey: {
			Schema: obj("StatusDetails is a set of additional properties.", map[string]spec.Schema{
				"name":   str("The name attribute of the resource."),
				"group":  str("The group attribute of the resource."),
				"kind":   str("The kind attribute of the resource."),
				"causes": array("The Causes array includes more details.", field("", statusCauseKey)),
			}),
			Dependencies: []string{statusCauseKey},
		},
		statusCauseKey: {Schema: obj("StatusCause provides more information about an api.Status failure.", map[string]spec.Schema{
			"reason":  str("A machine-readable description of the cause of the error."),
			"message": str("A human-readable description of the cause of the error."),
			"field":   str("The field of the resource that has caused this error."),
		})},
		deleteOptionsKey: {
			Schema: obj("DeleteOptions may be provided when deleting an API object.", map[string]spec.Schema{
				"kind":               str("Kind."),
				"apiVersion":         str("APIVersion."),
				"gracePeriodSeconds": i64("The duration in seconds before the object should be deleted."),
				"preconditions":      {SchemaProps: spec.SchemaProps{Description: "Must be fulfilled before a deletion is carried out.", Ref: ref(preconditionsKey)}},
				"propagationPolicy":  str("Whether and how garbage collection will be performed."),
				"dryRun":             array("When present, indicates that modifications should not be persisted.", *spec.StringProperty()),
			}),
			Dependencies: []string{preconditionsKey},
		},
		preconditionsKey: {Schema: obj("Preconditions must be fulfilled before an operation is carried out.", map[string]spec.Schema{
			"uid":             str("Specifies the target UID."),
			"resourceVersion": str("Specifies the target ResourceVersion."),
		})},
		patchKey: {Schema: spec.Schema{SchemaProps: spec.SchemaProps{
			Description: "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.",
			Type:        []string{"object"},
		}}},
		apiGroupKey: {Schema: obj("APIGroup contains the name, the supported versions, and the preferred version of a group.", map[string]spec.Schema{
			"name": str("name is the name of the group."),
		})},
	}
}
