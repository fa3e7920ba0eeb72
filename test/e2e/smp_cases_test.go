package e2e

// smpCase is one strategic merge patch and what kube-apiserver answers it.
type smpCase struct {
	name, query, patch string
	want               smpAnswer
}

type labels map[string]string

// meta is what the cases expect of a patched object's metadata.
func meta(l labels, finalizers []string, ownerUIDs ...string) smpMeta {
	var m smpMeta
	if len(l) > 0 {
		m.Labels = l
	}
	if len(finalizers) > 0 {
		m.Finalizers = finalizers
	}
	for _, uid := range ownerUIDs {
		m.OwnerReferences = append(m.OwnerReferences, struct {
			UID string `json:"uid"`
		}{uid})
	}
	return m
}

// smpUpstreamCases are recorded from kube-apiserver v1.37.1, patching a
// ConfigMap whose metadata are smpStart (TestStrategicMergePatchLikeKubeAPIServer
// with APILOOM_PEER_KUBECONFIG checks them there again). In messages,
// {resource} and {name} stand for the patched object's. A 500 without a reason is
// what kube-apiserver answers for the errors strategicpatch returns that
// it does not classify; apiloom answers the same.
var smpUpstreamCases = []smpCase{
	{name: "labels merge", patch: `{"metadata":{"labels":{"b":"3","c":"4","a":null}}}`, want: smpAnswer{code: 200, meta: meta(labels{"b": "3", "c": "4"}, []string{"example.com/f1", "example.com/f2"}, "u1", "u2")}},
	{name: "labels replace", patch: `{"metadata":{"labels":{"$patch":"replace","z":"9"}}}`, want: smpAnswer{code: 200, meta: meta(labels{"z": "9"}, []string{"example.com/f1", "example.com/f2"}, "u1", "u2")}},
	{name: "labels delete", patch: `{"metadata":{"labels":{"$patch":"delete"}}}`, want: smpAnswer{code: 200, meta: meta(labels{}, []string{"example.com/f1", "example.com/f2"}, "u1", "u2")}},
	{name: "labels bad directive", patch: `{"metadata":{"labels":{"$patch":"bogus"}}}`, want: smpAnswer{code: 500, message: "unknown patch type: bogus in map: map[$patch:bogus]"}},
	{name: "labels not a map", patch: `{"metadata":{"labels":"x"}}`, want: smpAnswer{code: 422, reason: "Invalid", message: " \"\" is invalid: patch: Invalid value: \"map[metadata:map[labels:x]]\": cannot restore map from string"}},
	{name: "labels value not a string", patch: `{"metadata":{"labels":{"a":{"b":1}}}}`, want: smpAnswer{code: 422, reason: "Invalid", message: " \"\" is invalid: patch: Invalid value: \"map[metadata:map[labels:map[a:map[b:1]]]]\": unrecognized type: string"}},
	{name: "finalizers merge", patch: `{"metadata":{"finalizers":["example.com/f3","example.com/f1"]}}`, want: smpAnswer{code: 200, meta: meta(labels{"b": "2", "a": "1"}, []string{"example.com/f3", "example.com/f1", "example.com/f2"}, "u1", "u2")}},
	{name: "finalizers delete from primitive list", patch: `{"metadata":{"$deleteFromPrimitiveList/finalizers":["example.com/f1"]}}`, want: smpAnswer{code: 200, meta: meta(labels{"a": "1", "b": "2"}, []string{"example.com/f2"}, "u1", "u2")}},
	{name: "finalizers delete list not a list", patch: `{"metadata":{"$deleteFromPrimitiveList/finalizers":"x"}}`, want: smpAnswer{code: 200, meta: meta(labels{"a": "1", "b": "2"}, []string{"example.com/f1", "example.com/f2"}, "u1", "u2")}},
	{name: "delete from primitive list without field", patch: `{"metadata":{"$deleteFromPrimitiveList":["x"]}}`, want: smpAnswer{code: 400, reason: "BadRequest", message: "invalid patch format of primitive list"}},
	{name: "finalizers set order", patch: `{"metadata":{"$setElementOrder/finalizers":["example.com/f2","example.com/f1"]}}`, want: smpAnswer{code: 200, meta: meta(labels{"b": "2", "a": "1"}, []string{"example.com/f2", "example.com/f1"}, "u1", "u2")}},
	{name: "finalizers set order with new", patch: `{"metadata":{"$setElementOrder/finalizers":["example.com/f3","example.com/f2","example.com/f1"],"finalizers":["example.com/f3"]}}`, want: smpAnswer{code: 200, meta: meta(labels{"b": "2", "a": "1"}, []string{"example.com/f3", "example.com/f2", "example.com/f1"}, "u1", "u2")}},
	{name: "set order of unknown field", patch: `{"metadata":{"$setElementOrder/bogus":["x"]}}`, want: smpAnswer{code: 500, message: "unable to find api field in struct ObjectMeta for the json field \"bogus\""}},
	{name: "set order of a map", patch: `{"metadata":{"$setElementOrder/labels":["x"]}}`, want: smpAnswer{code: 500, message: "expected a []interface {}, but received a map[string]interface {}"}},
	{name: "set order of an absent scalar", patch: `{"metadata":{"$setElementOrder/generateName":["x"]}}`, want: smpAnswer{code: 500, message: "expected slice or array type, but got: struct"}},
	{name: "set order of an absent map", patch: `{"metadata":{"$setElementOrder/annotations":["x"]}}`, want: smpAnswer{code: 500, message: "expected slice or array type, but got: struct"}},
	{name: "set order not a list", patch: `{"metadata":{"$setElementOrder/finalizers":"x"}}`, want: smpAnswer{code: 500, message: "expected a []interface {}, but received a string"}},
	{name: "set order mismatch", patch: `{"metadata":{"$setElementOrder/finalizers":["example.com/f1"],"finalizers":["example.com/f3"]}}`, want: smpAnswer{code: 500, message: "The order in patch list:\n[example.com/f3]\n doesn't match $setElementOrder list:\n[example.com/f1]\n"}},
	{name: "set order without field", patch: `{"metadata":{"$setElementOrder":["x"]}}`, want: smpAnswer{code: 400, reason: "BadRequest", message: "invalid patch format of setElementOrder list"}},
	{name: "finalizers null", patch: `{"metadata":{"finalizers":null}}`, want: smpAnswer{code: 200, meta: meta(labels{"a": "1", "b": "2"}, []string{}, "u1", "u2")}},
	{name: "finalizers list of lists", patch: `{"metadata":{"finalizers":[["x"]]}}`, want: smpAnswer{code: 500, message: "list element types are not identical: [[example.com/f1 example.com/f2] [[x]]]"}},
	{name: "finalizers mixed types", patch: `{"metadata":{"finalizers":[1]}}`, want: smpAnswer{code: 500, message: "list element types are not identical: [[example.com/f1 example.com/f2] [1]]"}},
	{name: "owners merge by uid", patch: `{"metadata":{"ownerReferences":[{"uid":"u3","apiVersion":"v1","kind":"ConfigMap","name":"o3"},{"uid":"u1","name":"o1b"}]}}`, want: smpAnswer{code: 200, meta: meta(labels{"b": "2", "a": "1"}, []string{"example.com/f1", "example.com/f2"}, "u3", "u1", "u2")}},
	{name: "owners delete element", patch: `{"metadata":{"ownerReferences":[{"uid":"u1","$patch":"delete"}]}}`, want: smpAnswer{code: 200, meta: meta(labels{"a": "1", "b": "2"}, []string{"example.com/f1", "example.com/f2"}, "u2")}},
	{name: "owners replace list", patch: `{"metadata":{"ownerReferences":[{"$patch":"replace"},{"uid":"u9","apiVersion":"v1","kind":"ConfigMap","name":"o9"}]}}`, want: smpAnswer{code: 200, meta: meta(labels{"a": "1", "b": "2"}, []string{"example.com/f1", "example.com/f2"}, "u9")}},
	{name: "owners merge directive", patch: `{"metadata":{"ownerReferences":[{"uid":"u1","$patch":"merge"}]}}`, want: smpAnswer{code: 500, message: "merging lists cannot yet be specified in the patch"}},
	{name: "owners unknown directive", patch: `{"metadata":{"ownerReferences":[{"uid":"u1","$patch":"bogus"}]}}`, want: smpAnswer{code: 500, message: "unknown patch type: bogus in map: map[$patch:bogus uid:u1]"}},
	{name: "owners element without merge key", patch: `{"metadata":{"ownerReferences":[{"name":"x"}]}}`, want: smpAnswer{code: 500, message: "map: map[name:x] does not contain declared merge key: uid"}},
	{name: "owners delete without merge key", patch: `{"metadata":{"ownerReferences":[{"$patch":"delete"}]}}`, want: smpAnswer{code: 500, message: "map: map[$patch:delete] does not contain declared merge key: uid"}},
	{name: "owners element not a map", patch: `{"metadata":{"ownerReferences":["x"]}}`, want: smpAnswer{code: 500, message: "list element types are not identical: [[map[apiVersion:v1 kind:ConfigMap name:o1 uid:u1] map[apiVersion:v1 kind:ConfigMap name:o2 uid:u2]] [x]]"}},
	{name: "retainKeys", patch: `{"metadata":{"$retainKeys":["name","namespace","uid","resourceVersion","creationTimestamp","finalizers","ownerReferences"]}}`, want: smpAnswer{code: 200, meta: meta(labels{}, []string{"example.com/f1", "example.com/f2"}, "u1", "u2")}},
	{name: "retainKeys not a list", patch: `{"metadata":{"$retainKeys":"x"}}`, want: smpAnswer{code: 400, reason: "BadRequest", message: "invalid patch format of retainKeys"}},
	{name: "retainKeys missing a patched field", patch: `{"metadata":{"$retainKeys":["name"],"labels":{"x":"y"}}}`, want: smpAnswer{code: 400, reason: "BadRequest", message: "invalid patch format of retainKeys"}},
	{name: "metadata delete", patch: `{"metadata":{"$patch":"delete"}}`, want: smpAnswer{code: 400, reason: "BadRequest", message: "the name of the object ({name} based on URL) was undeterminable: name must be provided"}},
	{name: "whole object delete", patch: `{"$patch":"delete"}`, want: smpAnswer{code: 400, reason: "BadRequest", message: "the name of the object ({name} based on URL) was undeterminable: name must be provided"}},
	{name: "whole object replace", patch: `{"$patch":"replace","metadata":{"name":"x"}}`, want: smpAnswer{code: 400, reason: "BadRequest", message: "the name of the object (x) does not match the name on the URL ({name})"}},
	{name: "top-level unknown directive", patch: `{"$patch":"bogus"}`, want: smpAnswer{code: 500, message: "unknown patch type: bogus in map: map[$patch:bogus]"}},
	{name: "metadata not a map", patch: `{"metadata":"x"}`, want: smpAnswer{code: 422, reason: "Invalid", message: " \"\" is invalid: patch: Invalid value: \"map[metadata:x]\": cannot restore struct from: string"}},
	{name: "kind ignored", patch: `{"kind":"Other","metadata":{"labels":{"k":"v"}}}`, want: smpAnswer{code: 200, meta: meta(labels{"k": "v", "a": "1", "b": "2"}, []string{"example.com/f1", "example.com/f2"}, "u1", "u2")}},
	{name: "apiVersion ignored", patch: `{"apiVersion":"other/v9","metadata":{"labels":{"k":"v"}}}`, want: smpAnswer{code: 200, meta: meta(labels{"a": "1", "b": "2", "k": "v"}, []string{"example.com/f1", "example.com/f2"}, "u1", "u2")}},
	{name: "name mismatch", patch: `{"metadata":{"name":"other"}}`, want: smpAnswer{code: 400, reason: "BadRequest", message: "the name of the object (other) does not match the name on the URL ({name})"}},
	{name: "namespace mismatch", patch: `{"metadata":{"namespace":"other"}}`, want: smpAnswer{code: 400, reason: "BadRequest", message: "the namespace of the provided object does not match the namespace sent on the request"}},
	{name: "stale resourceVersion", patch: `{"metadata":{"resourceVersion":"1","labels":{"k":"v"}}}`, want: smpAnswer{code: 409, reason: "Conflict", message: "Operation cannot be fulfilled on {resource} \"{name}\": the object has been modified; please apply your changes to the latest version and try again"}},
	{name: "unknown field warns", patch: `{"metadata":{"bogus":1,"labels":{"k":"v"}}}`, want: smpAnswer{code: 200, meta: meta(labels{"a": "1", "b": "2", "k": "v"}, []string{"example.com/f1", "example.com/f2"}, "u1", "u2"), warnings: []string{"unknown field \"metadata.bogus\""}}},
	{name: "duplicate field warns", patch: `{"metadata":{"labels":{"k":"v"},"labels":{"k":"w"}}}`, want: smpAnswer{code: 200, meta: meta(labels{"k": "w", "a": "1", "b": "2"}, []string{"example.com/f1", "example.com/f2"}, "u1", "u2"), warnings: []string{"duplicate field \"metadata.labels\""}}},
	{name: "unknown and duplicate strict", query: "fieldValidation=Strict", patch: `{"metadata":{"bogus":1,"labels":{"k":"v"},"labels":{"k":"w"}}}`, want: smpAnswer{code: 422, reason: "Invalid", message: " \"\" is invalid: patch: Invalid value: \"map[metadata:map[bogus:1 labels:map[k:w]]]\": strict decoding error: duplicate field \"metadata.labels\", unknown field \"metadata.bogus\""}},
	{name: "unknown field ignored", query: "fieldValidation=Ignore", patch: `{"metadata":{"bogus":1,"labels":{"k":"v"}}}`, want: smpAnswer{code: 200, meta: meta(labels{"a": "1", "b": "2", "k": "v"}, []string{"example.com/f1", "example.com/f2"}, "u1", "u2")}},
	{name: "malformed", patch: `{"metadata":`, want: smpAnswer{code: 400, reason: "BadRequest", message: "invalid JSON patch"}},
	{name: "array", patch: `[]`, want: smpAnswer{code: 400, reason: "BadRequest", message: "json: cannot unmarshal array into Go value of type map[string]interface {}"}},
	{name: "string", patch: `"x"`, want: smpAnswer{code: 400, reason: "BadRequest", message: "json: cannot unmarshal string into Go value of type map[string]interface {}"}},
	{name: "null", patch: `null`, want: smpAnswer{code: 200, meta: meta(labels{"b": "2", "a": "1"}, []string{"example.com/f1", "example.com/f2"}, "u1", "u2")}},
	{name: "empty object", patch: `{}`, want: smpAnswer{code: 200, meta: meta(labels{"a": "1", "b": "2"}, []string{"example.com/f1", "example.com/f2"}, "u1", "u2")}},
	{name: "bad fieldValidation", query: "fieldValidation=Bogus", patch: `{}`, want: smpAnswer{code: 422, reason: "Invalid", message: "PatchOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"Bogus\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""}},
	{name: "force on a non-apply patch", query: "force=true", patch: `{}`, want: smpAnswer{code: 422, reason: "Invalid", message: "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch"}},
	{name: "dry run", query: "dryRun=All", patch: `{"metadata":{"labels":{"k":"v"}}}`, want: smpAnswer{code: 200, meta: meta(labels{"a": "1", "b": "2", "k": "v"}, []string{"example.com/f1", "example.com/f2"}, "u1", "u2")}},
}
