package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Labels and annotations the load generator puts on objects; watchers
// find the write sequence number and markers through them.
const (
	labelSeq       = "load.apiloom.dev/seq"
	labelMarker    = "load.apiloom.dev/marker"
	annotationSent = "load.apiloom.dev/sent-unix-nano"
)

// objectFactory builds objects of the resource under load: a spec taken
// from the base spec, with a payload string at the payload field.
type objectFactory struct {
	// Immutable after newObjectFactory.
	apiVersion, kind, namespace string
	baseSpec                    map[string]any
	payloadPath                 []string
	payloadBytes                int
}

func newObjectFactory(c *config) (*objectFactory, error) {
	var spec map[string]any
	if err := json.Unmarshal([]byte(c.BaseSpec), &spec); err != nil {
		return nil, fmt.Errorf("%w: --spec: %v", errConfig, err)
	}
	apiVersion := c.Version
	if c.Group != "" {
		apiVersion = c.Group + "/" + c.Version
	}
	return &objectFactory{
		apiVersion: apiVersion, kind: c.Kind, namespace: c.Namespace,
		baseSpec:     spec,
		payloadPath:  strings.Split(c.PayloadField, "."),
		payloadBytes: c.PayloadBytes,
	}, nil
}

// object returns a new object called name with a payload of the
// configured size that starts with tag.
func (f *objectFactory) object(name, tag string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": deepCopyJSON(f.baseSpec)}}
	u.SetAPIVersion(f.apiVersion)
	u.SetKind(f.kind)
	u.SetNamespace(f.namespace)
	u.SetName(name)
	f.setPayload(u, tag)
	return u
}

// setPayload puts a payload starting with tag into u.
func (f *objectFactory) setPayload(u *unstructured.Unstructured, tag string) {
	_ = unstructured.SetNestedField(u.Object, payload(tag, f.payloadBytes), f.payloadPath...)
}

// payloadPatch is a JSON merge patch that sets the payload to one
// starting with tag.
func (f *objectFactory) payloadPatch(tag string) ([]byte, error) {
	var v any = payload(tag, f.payloadBytes)
	for i := len(f.payloadPath) - 1; i >= 0; i-- {
		v = map[string]any{f.payloadPath[i]: v}
	}
	return json.Marshal(v)
}

// stampWrite marks u as write seq, started at unixNano.
func stampWrite(u *unstructured.Unstructured, seq int, unixNano int64) {
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[labelSeq] = strconv.Itoa(seq)
	u.SetLabels(labels)
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[annotationSent] = strconv.FormatInt(unixNano, 10)
	u.SetAnnotations(ann)
}

// payload returns a string of exactly n bytes (at least len(tag)) that
// starts with tag, filled with a repeating alphabet so that it neither
// compresses to nothing nor needs escaping in JSON.
func payload(tag string, n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var b strings.Builder
	b.Grow(max(n, len(tag)))
	b.WriteString(tag)
	for i := 0; b.Len() < n; i++ {
		b.WriteByte(alphabet[i%len(alphabet)])
	}
	return b.String()
}

// deepCopyJSON copies a decoded JSON object so that objects do not share
// nested maps.
func deepCopyJSON(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return runtime.DeepCopyJSONValue(m).(map[string]any)
}
