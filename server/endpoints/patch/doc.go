// Package patch applies the patches of PATCH requests to an object's
// content, as kube-apiserver applies them: JSON patch (with its bound on
// copies), JSON merge patch and strategic merge patch (with its bound on
// the work of merging lists, and its patch meta, from OpenAPI definitions
// or struct tags). It works on bytes and unstructured content, knowing
// nothing of handlers or Go types, so that each kind of patch and the
// errors kube-apiserver answers for it are in one place; server/endpoints
// reads the request and turns the result into the typed object.
//
// A new patch type that applies to an object's JSON touches only this
// package (its media type, a case in Parse and in Parsed.Apply) plus the
// types resource.PatchTypes accepts: server/endpoints passes the request's
// type through. (The scale subresource applies JSON and merge patches to
// its Scale itself, and accepts only resource.ScalePatchTypes.)
package patch
