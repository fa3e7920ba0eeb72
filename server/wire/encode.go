package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// EncodeObject returns obj as JSON with kind and apiVersion set to gvk.
//
// obj itself is never modified: objects handed out by the watch cache are
// shared by every reader, so when obj does not already carry gvk the type
// meta is set on a shallow copy. The output matches what apimachinery's JSON
// serializer writes (HTML-escaped, fields in declaration order) without the
// trailing newline.
func EncodeObject(obj runtime.Object, gvk schema.GroupVersionKind) ([]byte, error) {
	return json.Marshal(withKind(obj, gvk))
}

// TypeMetaPrefix is how EncodeObject's JSON of an object of kind gvk
// starts: its kind and apiVersion, then the comma before the next field.
// An object without kind and apiVersion is "{" followed by what comes after
// it (WriteUntyped).
func TypeMetaPrefix(gvk schema.GroupVersionKind) []byte {
	kind, _ := json.Marshal(gvk.Kind)
	apiVersion, _ := json.Marshal(gvk.GroupVersion().String())
	return fmt.Appendf(nil, `{"kind":%s,"apiVersion":%s,`, kind, apiVersion)
}

// WriteUntyped writes objectJSON, an object EncodeObject encoded with the
// kind and apiVersion that prefix (TypeMetaPrefix) states, without them:
// the items of a built-in kind's list, which kube-apiserver writes from
// typed objects whose kind and apiVersion are empty. JSON that does not
// start with prefix is written as it is.
func WriteUntyped(w io.Writer, objectJSON, prefix []byte) error {
	if !bytes.HasPrefix(objectJSON, prefix) {
		_, err := w.Write(objectJSON)
		return err
	}
	if _, err := w.Write(openBrace); err != nil {
		return err
	}
	_, err := w.Write(objectJSON[len(prefix):])
	return err
}

var openBrace = []byte("{")

// ObjectWriter streams objects to one writer, each with kind and apiVersion
// set (none, for the zero kind) and exactly the bytes EncodeObject returns: encoding/json's Encoder
// ends each value with a newline, which is cut, so a list written item by
// item is byte for byte the list json.Marshal would give (as apimachinery's
// streaming collection encoder, KEP-5116, guarantees). One reused buffer
// holds the item being written, so writing a list takes memory for its
// largest item, not for the list. It is what the list handler uses to write
// items without building the whole list in memory.
type ObjectWriter struct {
	w   io.Writer
	buf bytes.Buffer
	enc *json.Encoder // writes to buf
	gvk schema.GroupVersionKind
}

// NewObjectWriter returns an ObjectWriter that writes to w.
func NewObjectWriter(w io.Writer, gvk schema.GroupVersionKind) *ObjectWriter {
	o := &ObjectWriter{w: w, gvk: gvk}
	o.enc = json.NewEncoder(&o.buf)
	return o
}

// Write encodes obj to the writer, with the writer's kind and apiVersion.
func (o *ObjectWriter) Write(obj runtime.Object) error {
	return o.WriteValue(withKind(obj, o.gvk))
}

// WriteValue encodes v to the writer as json.Marshal would, in one Write.
func (o *ObjectWriter) WriteValue(v any) error {
	o.buf.Reset()
	if err := o.enc.Encode(v); err != nil {
		return err
	}
	o.buf.Truncate(o.buf.Len() - 1) // Encode's newline
	_, err := o.w.Write(o.buf.Bytes())
	return err
}

// withKind returns obj if it already carries gvk, and otherwise a copy of it
// that does. The copy is shallow when obj is a pointer to a struct whose
// kind lives in an embedded metav1.TypeMeta (maps and slices stay shared,
// which is fine for encoding) and deep otherwise: an Unstructured, say,
// keeps its kind in a map that a shallow copy would share.
func withKind(obj runtime.Object, gvk schema.GroupVersionKind) runtime.Object {
	if obj.GetObjectKind().GroupVersionKind() == gvk {
		return obj
	}
	v := reflect.ValueOf(obj)
	if _, typed := obj.GetObjectKind().(*metav1.TypeMeta); typed && v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Struct {
		cp := reflect.New(v.Elem().Type())
		cp.Elem().Set(v.Elem())
		if c, ok := cp.Interface().(runtime.Object); ok {
			c.GetObjectKind().SetGroupVersionKind(gvk)
			return c
		}
	}
	c := obj.DeepCopyObject()
	c.GetObjectKind().SetGroupVersionKind(gvk)
	return c
}
