package discovery

import (
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/apiloom/apiloom/server/resource"
)

// openAPIV3Index is /openapi/v3: each group-version's document path
// ("apis/g/v") and the URL that names its current content.
type openAPIV3Index struct {
	Paths map[string]openAPIV3IndexEntry `json:"paths"`
}

type openAPIV3IndexEntry struct {
	ServerRelativeURL string `json:"serverRelativeURL"`
}

// openAPIV3URL is the content-addressed URL of a group-version's document,
// e.g. "/openapi/v3/apis/example.apiloom.dev/v1?hash=3F2A...".
func openAPIV3URL(v *groupVersion, hash string) string {
	return "/openapi/v3/" + v.path() + "?hash=" + hash
}

// openAPIV3Doc renders the OpenAPI v3 document of one group-version.
func openAPIV3Doc(v *groupVersion, defs common.GetOpenAPIDefinitions, namer *schemaNamer, options map[string][]queryParam, info *spec.Info) (*spec3.OpenAPI, error) {
	schemas, err := componentSchemasV3(defs, namer, v)
	if err != nil {
		return nil, err
	}
	doc := &spec3.OpenAPI{
		Version:    "3.0.0",
		Info:       info,
		Paths:      &spec3.Paths{Paths: map[string]*spec3.Path{}},
		Components: &spec3.Components{Schemas: schemas},
	}
	for _, r := range v.resources {
		for _, rt := range resourceRoutes(r, options) {
			doc.Paths.Paths[rt.path] = pathV3(r, rt)
		}
	}
	return doc, nil
}

// pathV3 renders one path. Path parameters are stated once on the path, as
// kube-apiserver does; query parameters on each operation, which is where
// kubectl looks for fieldValidation.
func pathV3(info *resource.Info, rt route) *spec3.Path {
	p := &spec3.Path{}
	if rt.name {
		p.Parameters = append(p.Parameters, pathParamV3("name", "name of the "+info.Kind))
	}
	if rt.namespace {
		p.Parameters = append(p.Parameters, pathParamV3("namespace", "object name and auth scope, such as for teams and projects"))
	}
	for _, op := range rt.ops {
		o := operationV3(info, op)
		switch op.method {
		case "get":
			p.Get = o
		case "post":
			p.Post = o
		case "put":
			p.Put = o
		case "patch":
			p.Patch = o
		case "delete":
			p.Delete = o
		}
	}
	return p
}

func pathParamV3(name, description string) *spec3.Parameter {
	return &spec3.Parameter{ParameterProps: spec3.ParameterProps{
		Name: name, In: "path", Description: description, Required: true,
		Schema: spec.StringProperty(),
	}}
}

// operationV3 renders one operation. Its x-kubernetes-group-version-kind is
// a single object (on schemas it is a list): that is what cli-runtime's
// query-parameter verifier and kubectl explain read.
func operationV3(info *resource.Info, op operation) *spec3.Operation {
	o := &spec3.Operation{
		OperationProps: spec3.OperationProps{
			Tags:        []string{tag(info.Group, info.Version)},
			Description: op.description,
			OperationId: op.id,
			Responses: &spec3.Responses{ResponsesProps: spec3.ResponsesProps{
				StatusCodeResponses: map[int]*spec3.Response{
					401: {ResponseProps: spec3.ResponseProps{Description: "Unauthorized"}},
				},
			}},
		},
		VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{
			extAction: op.action,
			extGVK:    op.gvk(info),
		}},
	}
	for _, q := range op.params {
		o.Parameters = append(o.Parameters, &spec3.Parameter{ParameterProps: spec3.ParameterProps{
			Name: q.name, In: "query", Description: q.description,
			Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{q.typ}}},
		}})
	}
	switch op.body {
	case bodyObject:
		o.RequestBody = requestBodyV3(op.objectKey(info), true, contentTypeJSON)
	case bodyPatch:
		o.RequestBody = requestBodyV3(patchKey, true, op.patchTypes()...)
	case bodyDeleteOptions:
		o.RequestBody = requestBodyV3(deleteOptionsKey, false, contentTypeJSON)
	case bodyInput:
		o.RequestBody = requestBodyV3(op.custom.InputOpenAPIName, true, contentTypeJSON)
	}
	for _, resp := range op.responses {
		r := &spec3.Response{ResponseProps: spec3.ResponseProps{Description: resp.description}}
		switch key := responseSchemaKey(info, op, resp.kind); {
		case resp.kind == respText:
			r.Content = map[string]*spec3.MediaType{contentTypeText: {MediaTypeProps: spec3.MediaTypeProps{Schema: spec.StringProperty()}}}
		case key != "":
			r.Content = jsonContentV3(key)
		}
		o.Responses.StatusCodeResponses[resp.code] = r
	}
	return o
}

func requestBodyV3(key string, required bool, contentTypes ...string) *spec3.RequestBody {
	b := &spec3.RequestBody{RequestBodyProps: spec3.RequestBodyProps{
		Required: required,
		Content:  map[string]*spec3.MediaType{},
	}}
	for _, ct := range contentTypes {
		b.Content[ct] = &spec3.MediaType{MediaTypeProps: spec3.MediaTypeProps{Schema: refV3(key)}}
	}
	return b
}

func jsonContentV3(key string) map[string]*spec3.MediaType {
	return map[string]*spec3.MediaType{contentTypeJSON: {MediaTypeProps: spec3.MediaTypeProps{Schema: refV3(key)}}}
}

// refV3 is a schema referring to the component of definition key.
func refV3(key string) *spec.Schema {
	return spec.RefSchema("#/components/schemas/" + common.EscapeJsonPointer(schemaName(key)))
}

// responseSchemaKey is the definition a response body holds; "" for none
// (a stream's text, a custom subresource without a result definition).
func responseSchemaKey(info *resource.Info, op operation, kind responseKind) string {
	switch kind {
	case respList:
		return listKey(info)
	case respStatus:
		return statusKey
	case respResult:
		return op.custom.ResultOpenAPIName
	case respText:
		return ""
	default:
		return op.objectKey(info)
	}
}
