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
	// foreign decodes values stored in another version of the kind
	// (WithForeignDecoder); nil when the kind has one version.
	foreign ForeignDecoder
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
// relative key, for the error. A value stored as another version of the
// kind goes through the foreign decoder, when there is one. A value that
// does not decode is an *Error wrapping ErrCorrupt.
func (c *codec[O]) decode(data []byte, rev int64, key string) (O, error) {
	obj := c.newObj()
	if err := decoder.Unmarshal(data, obj); err != nil {
		// The slow path of a rare event: decode again with encoding/json,
		// whose error is the one kube-apiserver reports ("invalid
		// character ..."), and whose reading wins should the two differ.
		obj = c.newObj()
		if err := json.Unmarshal(data, obj); err != nil {
			// A value of another version may not decode as this one
			// (a field whose type changed): its own version decides.
			if gv, ok := c.foreignVersion(data); ok {
				return c.decodeForeignAt(gv, data, rev, key)
			}
			var zero O
			return zero, &Error{Err: ErrCorrupt, Key: key, ResourceVersion: rev, Detail: err.Error()}
		}
	}
	if c.foreign != nil {
		// The apiVersion read from the value, before stamp overwrites
		// it: the store's own (every value it wrote) costs nothing more.
		if gv := obj.GetObjectKind().GroupVersionKind().GroupVersion(); gv != c.gvk.GroupVersion() && !gv.Empty() {
			return c.decodeForeignAt(gv, data, rev, key)
		}
	}
	c.stamp(obj, rev)
	return obj, nil
}

// foreignVersion is the apiVersion data is stored as when the store has a
// foreign decoder and it is not the store's own.
func (c *codec[O]) foreignVersion(data []byte) (schema.GroupVersion, bool) {
	if c.foreign == nil {
		return schema.GroupVersion{}, false
	}
	var tm struct {
		APIVersion string `json:"apiVersion"`
	}
	if json.Unmarshal(data, &tm) != nil {
		return schema.GroupVersion{}, false
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if err != nil || gv.Empty() || gv == c.gvk.GroupVersion() {
		return schema.GroupVersion{}, false
	}
	return gv, true
}

// decodeForeignAt is decode of data stored as gv, another version than the
// store's: decoded as gv and converted to the store's version by the
// foreign decoder. What it cannot read or convert is ErrCorrupt.
func (c *codec[O]) decodeForeignAt(gv schema.GroupVersion, data []byte, rev int64, key string) (O, error) {
	var zero O
	converted, err := c.foreign(gv.String(), data)
	if err != nil {
		return zero, &Error{Err: ErrCorrupt, Key: key, ResourceVersion: rev, Detail: err.Error()}
	}
	obj, ok := converted.(O)
	if !ok {
		return zero, &Error{Err: ErrCorrupt, Key: key, ResourceVersion: rev,
			Detail: fmt.Sprintf("value stored as %s converts to %T, not %T", gv, converted, zero)}
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
