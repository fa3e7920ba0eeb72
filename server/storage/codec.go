package storage

import (
	"encoding/json"
	"fmt"
	"strings"

	jsoniter "github.com/json-iterator/go"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/server/resource"
)

// decoder is json-iterator in its encoding/json-compatible mode: decoding is
// the hot path of lists and watches and it is twice as fast there, while
// encoding/json is as fast for encoding (measured, so the standard library
// stays where it costs nothing).
var decoder = jsoniter.ConfigCompatibleWithStandardLibrary

// codec turns objects into stored values and back. Stored values are the
// object's JSON with kind and apiVersion set and without resourceVersion:
// the revision lives in etcd's mod revision, never in the value, so a value
// does not change when it is read back at a later revision.
type codec[O resource.Object] struct {
	newObj func() O
	gvk    schema.GroupVersionKind
}

// encode returns obj's stored form. It sets obj's kind and apiVersion and
// clears its resourceVersion: callers pass objects they own.
func (c *codec[O]) encode(obj O) ([]byte, error) {
	obj.GetObjectKind().SetGroupVersionKind(c.gvk)
	obj.SetResourceVersion("")
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("storage: encode %s: %w", c.gvk.Kind, err)
	}
	return data, nil
}

// decode returns the object stored as data at revision rev, with its
// resourceVersion set to rev and its kind and apiVersion set. key is the
// relative key, for the error. A value that does not decode is an *Error
// wrapping ErrCorrupt.
func (c *codec[O]) decode(data []byte, rev int64, key string) (O, error) {
	obj := c.newObj()
	if err := decoder.Unmarshal(data, obj); err != nil {
		// The slow path of a rare event: decode again with encoding/json,
		// whose error is the one kube-apiserver reports ("invalid
		// character ..."), and whose reading wins should the two differ.
		obj = c.newObj()
		if err := json.Unmarshal(data, obj); err != nil {
			var zero O
			return zero, &Error{Err: ErrCorrupt, Key: key, ResourceVersion: rev, Detail: err.Error()}
		}
	}
	c.stamp(obj, rev)
	return obj, nil
}

// stamp sets the fields of obj that are not stored: kind, apiVersion and
// resourceVersion.
func (c *codec[O]) stamp(obj O, rev int64) {
	obj.GetObjectKind().SetGroupVersionKind(c.gvk)
	obj.SetResourceVersion(FormatResourceVersion(rev))
}

// empty returns a new object that carries only its kind and the revision:
// the body of a BOOKMARK event.
func (c *codec[O]) empty(rev int64) O {
	obj := c.newObj()
	c.stamp(obj, rev)
	return obj
}

// keyObject returns a new object that carries only what the key and the
// revision tell: namespace, name, kind and resourceVersion. It stands for
// an object whose stored value cannot be read, in the DELETED that tells
// watchers it is gone.
func (c *codec[O]) keyObject(key string, rev int64) O {
	obj := c.empty(rev)
	if ns, name, ok := strings.Cut(key, "/"); ok {
		obj.SetNamespace(ns)
		obj.SetName(name)
	} else {
		obj.SetName(key)
	}
	return obj
}
