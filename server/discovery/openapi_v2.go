package discovery

import (
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/apiloom/apiloom/server/resource"
)

// OpenAPI v2 is one document for the whole server. kubectl reads it only
// when OpenAPI v3 fails, and client-go asks for it as protobuf, so it is
// served both as JSON and as gnostic's protobuf encoding.

// openAPIV2Doc renders the OpenAPI v2 document of every group-version.
func openAPIV2Doc(groups []*apiGroup, defs common.GetOpenAPIDefinitions, namer *schemaNamer, options map[string][]queryParam, info *spec.Info) (*spec.Swagger, error) {
	definitions, err := definitionsV2(defs, namer, groups)
	if err != nil {
		return nil, err
	}
	doc := &spec.Swagger{SwaggerProps: spec.SwaggerProps{
		Swagger:     "2.0",
		Info:        info,
		Paths:       &spec.Paths{Paths: map[string]spec.PathItem{}},
		Definitions: definitions,
	}}
	for _, g := range groups {
		for _, v := range g.versions {
			for _, r := range v.resources {
				for _, rt := range resourceRoutes(r, options) {
					doc.Paths.Paths[rt.path] = pathV2(r, rt)
				}
			}
		}
	}
	return doc, nil
}

func pathV2(info *resource.Info, rt route) spec.PathItem {
	var p spec.PathItem
	if rt.name {
		p.Parameters = append(p.Parameters, pathParamV2("name", "name of the "+info.Kind))
	}
	if rt.namespace {
		p.Parameters = append(p.Parameters, pathParamV2("namespace", "object name and auth scope, such as for teams and projects"))
	}
	for _, op := range rt.ops {
		o := operationV2(info, op)
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

func pathParamV2(name, description string) spec.Parameter {
	p := spec.Parameter{ParamProps: spec.ParamProps{Name: name, In: "path", Description: description, Required: true}}
	p.Type = "string"
	p.UniqueItems = true
	return p
}

func operationV2(info *resource.Info, op operation) *spec.Operation {
	o := &spec.Operation{
		OperationProps: spec.OperationProps{
			Description: op.description,
			Consumes:    []string{contentTypeJSON},
			Produces:    []string{contentTypeJSON},
			Schemes:     []string{"https"},
			Tags:        []string{tag(info.Group, info.Version)},
			ID:          op.id,
			Responses: &spec.Responses{ResponsesProps: spec.ResponsesProps{
				StatusCodeResponses: map[int]spec.Response{
					401: {ResponseProps: spec.ResponseProps{Description: "Unauthorized"}},
				},
			}},
		},
		VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{
			extAction: op.action,
			extGVK:    op.gvk(info),
		}},
	}
	switch op.body {
	case bodyObject:
		o.Parameters = append(o.Parameters, bodyParamV2(op.objectKey(info), true))
	case bodyPatch:
		o.Consumes = op.patchTypes()
		o.Parameters = append(o.Parameters, bodyParamV2(patchKey, true))
	case bodyDeleteOptions:
		o.Parameters = append(o.Parameters, bodyParamV2(deleteOptionsKey, false))
	case bodyInput:
		o.Parameters = append(o.Parameters, bodyParamV2(op.custom.InputOpenAPIName, true))
	}
	for _, q := range op.params {
		p := spec.Parameter{ParamProps: spec.ParamProps{Name: q.name, In: "query", Description: q.description}}
		p.Type = q.typ
		p.UniqueItems = true
		o.Parameters = append(o.Parameters, p)
	}
	for _, resp := range op.responses {
		r := spec.Response{ResponseProps: spec.ResponseProps{Description: resp.description}}
		switch key := responseSchemaKey(info, op, resp.kind); {
		case resp.kind == respText:
			o.Produces = []string{contentTypeText}
			r.Schema = spec.StringProperty()
		case key != "":
			r.Schema = refV2(key)
		}
		o.Responses.StatusCodeResponses[resp.code] = r
	}
	return o
}

func bodyParamV2(key string, required bool) spec.Parameter {
	return spec.Parameter{ParamProps: spec.ParamProps{Name: "body", In: "body", Required: required, Schema: refV2(key)}}
}

// refV2 is a schema referring to the definition key.
func refV2(key string) *spec.Schema {
	return spec.RefSchema("#/definitions/" + common.EscapeJsonPointer(schemaName(key)))
}
