package discovery

import (
	"strings"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/resource"
)

// This file states, once for both OpenAPI versions, which operations a
// resource's paths serve. It follows what kube-apiserver publishes for a
// CustomResourceDefinition (apiextensions-apiserver's openapi builder): a
// list across namespaces, list/create/deletecollection on the collection,
// get/replace/patch/delete on an object, and get/replace/patch on its status.

// queryParam is an optional query parameter of an operation.
type queryParam struct {
	name, typ, description string
}

// Query parameters, described with apimachinery's own option docs so that
// they read like kube-apiserver's. Only parameters the handlers honour are
// listed.
var (
	listDoc   = metav1.ListOptions{}.SwaggerDoc()
	getDoc    = metav1.GetOptions{}.SwaggerDoc()
	createDoc = metav1.CreateOptions{}.SwaggerDoc()
	patchDoc  = metav1.PatchOptions{}.SwaggerDoc()
	deleteDoc = metav1.DeleteOptions{}.SwaggerDoc()

	getParams  = []queryParam{{"resourceVersion", "string", getDoc["resourceVersion"]}}
	listParams = []queryParam{
		{"allowWatchBookmarks", "boolean", listDoc["allowWatchBookmarks"]},
		{"continue", "string", listDoc["continue"]},
		{"fieldSelector", "string", listDoc["fieldSelector"]},
		{"labelSelector", "string", listDoc["labelSelector"]},
		{"limit", "integer", listDoc["limit"]},
		{"resourceVersion", "string", listDoc["resourceVersion"]},
		{"resourceVersionMatch", "string", listDoc["resourceVersionMatch"]},
		{"sendInitialEvents", "boolean", listDoc["sendInitialEvents"]},
		{"timeoutSeconds", "integer", listDoc["timeoutSeconds"]},
		{"watch", "boolean", listDoc["watch"]},
	}
	// writeParams go on POST and PUT. fieldValidation is what kubectl looks
	// for before it trusts the server to validate (cli-runtime's
	// QueryParamVerifierV3 checks the PATCH operation).
	writeParams = []queryParam{
		{"dryRun", "string", createDoc["dryRun"]},
		{"fieldManager", "string", createDoc["fieldManager"]},
		{"fieldValidation", "string", createDoc["fieldValidation"]},
	}
	patchParams = []queryParam{
		{"dryRun", "string", patchDoc["dryRun"]},
		{"fieldManager", "string", patchDoc["fieldManager"]},
		{"fieldValidation", "string", patchDoc["fieldValidation"]},
		{"force", "boolean", patchDoc["force"]},
	}
	deleteParams = []queryParam{
		{"dryRun", "string", deleteDoc["dryRun"]},
		{"gracePeriodSeconds", "integer", deleteDoc["gracePeriodSeconds"]},
		{"propagationPolicy", "string", deleteDoc["propagationPolicy"]},
	}
	deleteCollectionParams = append(append([]queryParam{}, deleteParams...), listParams...)
)

// bodyKind is what a request body holds.
type bodyKind int

const (
	bodyNone bodyKind = iota
	bodyObject
	bodyPatch
	bodyDeleteOptions
	// bodyInput is a custom action's input (SubresourceInfo.InputOpenAPIName).
	bodyInput
)

// responseKind is what a response body holds.
type responseKind int

const (
	respObject responseKind = iota
	respList
	respStatus
	// respResult is a custom subresource's result
	// (SubresourceInfo.ResultOpenAPIName).
	respResult
	// respText is a stream's body: a string, as text/plain.
	respText
)

// response is one documented status code.
type response struct {
	code        int
	description string
	kind        responseKind
}

// operation is one method on one path.
type operation struct {
	// scale says the operation is on a /scale subresource: its object is
	// an autoscaling/v1 Scale, not the kind, and it takes fewer patch types.
	scale bool
	// custom is the kind's own subresource the operation serves; its
	// kind marks the operation and its definitions are the body and the
	// result.
	custom *resource.SubresourceInfo
	method string // lower-case HTTP method: get, post, put, patch, delete
	// action is x-kubernetes-action: get, list, post, put, patch, delete,
	// deletecollection.
	action      string
	id          string // operationId
	description string
	params      []queryParam
	body        bodyKind
	responses   []response
}

// route is one path of a resource and its operations.
type route struct {
	path string
	// namespace and name say which path parameters the path has.
	namespace, name bool
	ops             []operation
}

// resourceRoutes lists info's paths and operations. options are the query
// parameters of each stream's options definition, by definition key
// (streamParams).
func resourceRoutes(info *resource.Info, options map[string][]queryParam) []route {
	gv := info.PathPrefix()
	ns, nsWord := "", ""
	if info.Namespaced {
		ns, nsWord = "/namespaces/{namespace}", "Namespaced"
	}
	if info.CreateOnly {
		return []route{{path: gv + ns + "/" + info.Plural, namespace: info.Namespaced, ops: []operation{createOp(info, nsWord)}}}
	}
	var routes []route
	if info.Namespaced {
		routes = append(routes, route{
			path: gv + "/" + info.Plural,
			ops: []operation{{
				method: "get", action: "list",
				id:          opID("list", info, "", "ForAllNamespaces"),
				description: "list objects of kind " + info.Kind,
				params:      listParams,
				responses:   []response{{200, "OK", respList}},
			}},
		})
	}
	collection := gv + ns + "/" + info.Plural
	object := collection + "/{name}"
	routes = append(routes,
		route{path: collection, namespace: info.Namespaced, ops: []operation{
			{
				method: "get", action: "list",
				id:          opID("list", info, nsWord, ""),
				description: "list objects of kind " + info.Kind,
				params:      listParams,
				responses:   []response{{200, "OK", respList}},
			},
			createOp(info, nsWord),
			{
				method: "delete", action: "deletecollection",
				id:          opID("deletecollection", info, nsWord, ""),
				description: "delete collection of " + info.Kind,
				params:      deleteCollectionParams,
				body:        bodyDeleteOptions,
				responses:   []response{{200, "OK", respStatus}},
			},
		}},
		route{path: object, namespace: info.Namespaced, name: true, ops: objectOps(info, nsWord, "")},
	)
	if info.HasStatus {
		routes = append(routes, route{
			path: object + "/" + statusSubresource, namespace: info.Namespaced, name: true,
			ops: objectOps(info, nsWord, statusSubresource),
		})
	}
	if info.Scale != nil {
		ops := objectOps(info, nsWord, scaleSubresource)
		for i := range ops {
			ops[i].scale = true
		}
		routes = append(routes, route{path: object + "/" + scaleSubresource, namespace: info.Namespaced, name: true, ops: ops})
	}
	for i := range info.Subresources {
		sub := &info.Subresources[i]
		if sub.Type == "" {
			continue // served by the server itself, described elsewhere or not at all
		}
		routes = append(routes, route{
			path: object + "/" + sub.Name, namespace: info.Namespaced, name: true,
			ops: []operation{customOp(info, nsWord, sub, options)},
		})
	}
	return routes
}

// customOp is the one operation of a kind's own subresource, written as
// kube-apiserver writes pods/eviction (an action: POST, "create eviction of
// a Pod", createCoreV1NamespacedPodEviction) and pods/log (a stream: GET,
// "read log of the specified Pod", readCoreV1NamespacedPodLog, a query
// parameter per field of its options, a string answer). A view is a GET
// like pods/log's answering its result. Each is marked with the
// subresource's kind, as upstream marks pods/eviction with policy/v1
// Eviction and pods/log with the Pod.
func customOp(info *resource.Info, nsWord string, sub *resource.SubresourceInfo, options map[string][]queryParam) operation {
	suffix := camel(sub.Name)
	switch sub.Type {
	case resource.Action:
		op := operation{
			custom: sub, method: "post", action: "post",
			id:          opID("create", info, nsWord, suffix),
			description: "create " + sub.Name + " of " + article(info.Kind) + " " + info.Kind,
			params:      writeParams,
			responses:   []response{{200, "OK", respResult}, {201, "Created", respResult}, {202, "Accepted", respResult}},
		}
		if sub.InputOpenAPIName != "" {
			op.body = bodyInput
		}
		return op
	case resource.Stream:
		return operation{
			custom: sub, method: "get", action: "get",
			id:          opID("read", info, nsWord, suffix),
			description: "read " + sub.Name + " of the specified " + info.Kind,
			params:      options[sub.InputOpenAPIName],
			responses:   []response{{200, "OK", respText}},
		}
	default: // resource.View
		return operation{
			custom: sub, method: "get", action: "get",
			id:          opID("read", info, nsWord, suffix),
			description: "read " + sub.Name + " of the specified " + info.Kind,
			responses:   []response{{200, "OK", respResult}},
		}
	}
}

// createOp is the POST on info's collection.
func createOp(info *resource.Info, nsWord string) operation {
	return operation{
		method: "post", action: "post",
		id:          opID("create", info, nsWord, ""),
		description: "create " + article(info.Kind) + " " + info.Kind,
		params:      writeParams,
		body:        bodyObject,
		responses:   []response{{200, "OK", respObject}, {201, "Created", respObject}, {202, "Accepted", respObject}},
	}
}

// objectOps are the operations on one object, or on its subresource sub.
func objectOps(info *resource.Info, nsWord, sub string) []operation {
	of := " the specified "
	if sub != "" {
		of = " " + sub + " of the specified "
	}
	suffix := ""
	if sub != "" {
		suffix = strings.ToUpper(sub[:1]) + sub[1:]
	}
	ops := []operation{
		{
			method: "get", action: "get",
			id:          opID("read", info, nsWord, suffix),
			description: "read" + of + info.Kind,
			params:      getParams,
			responses:   []response{{200, "OK", respObject}},
		},
		{
			method: "put", action: "put",
			id:          opID("replace", info, nsWord, suffix),
			description: "replace" + of + info.Kind,
			params:      writeParams,
			body:        bodyObject,
			responses:   []response{{200, "OK", respObject}, {201, "Created", respObject}},
		},
		{
			method: "patch", action: "patch",
			id:          opID("patch", info, nsWord, suffix),
			description: "partially update" + of + info.Kind,
			params:      patchParams,
			body:        bodyPatch,
			responses:   []response{{200, "OK", respObject}, {201, "Created", respObject}},
		},
	}
	if sub == "" {
		ops = append(ops, operation{
			method: "delete", action: "delete",
			id:          opID("delete", info, nsWord, ""),
			description: "delete " + article(info.Kind) + " " + info.Kind,
			params:      deleteParams,
			body:        bodyDeleteOptions,
			responses:   []response{{200, "OK", respStatus}, {202, "Accepted", respStatus}},
		})
	}
	return ops
}

// objectKey is the definition an operation's object body and responses
// hold (its Status responses aside).
func (op operation) objectKey(info *resource.Info) string {
	if op.scale {
		return scaleKey
	}
	return info.OpenAPIName
}

// gvk is the operation's x-kubernetes-group-version-kind: the kind, or
// autoscaling/v1 Scale on /scale, as kube-apiserver marks a CRD's.
func (op operation) gvk(info *resource.Info) map[string]any {
	if op.scale {
		return scaleGVK
	}
	if op.custom != nil {
		return gvkExtension(op.custom.Kind.Group, op.custom.Kind.Version, op.custom.Kind.Kind)
	}
	return gvkExtension(info.Group, info.Version, info.Kind)
}

// patchTypes are the media types the operation's PATCH body may have.
func (op operation) patchTypes() []string {
	if op.scale {
		return resource.ScalePatchTypes()
	}
	return resource.PatchTypes()
}

// opID builds an operationId unique within the server, in kube-apiserver's
// style: verb, group and version camel-cased, scope, kind, suffix, e.g.
// "patchExampleApiloomDevV1NamespacedDatabaseStatus".
func opID(verb string, info *resource.Info, nsWord, suffix string) string {
	return verb + camel(groupWord(info.Group)) + camel(info.Version) + nsWord + info.Kind + suffix
}

// groupWord is how operation ids and tags name group: "core" for the core
// group (""), as kube-apiserver's do ("listCoreV1NamespacedConfigMap").
func groupWord(group string) string {
	if group == "" {
		return "core"
	}
	return group
}

// tag groups operations by group-version, e.g. "exampleApiloomDev_v1".
func tag(group, version string) string {
	c := camel(groupWord(group))
	return strings.ToLower(c[:1]) + c[1:] + "_" + version
}

// camel drops every character that is not a letter or digit and upper-cases
// the letter after each dropped one and the first: "example.apiloom.dev" ->
// "ExampleApiloomDev".
func camel(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// article is the indefinite article for an English noun.
func article(noun string) string {
	if noun != "" && strings.ContainsRune("AEIOUaeiou", rune(noun[0])) {
		return "an"
	}
	return "a"
}
