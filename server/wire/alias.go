package wire

import (
	stdencoding "encoding"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"unsafe"

	jsoniter "github.com/json-iterator/go"
	"github.com/modern-go/reflect2"
)

// DecodeAliasing decodes data, JSON as EncodeObject writes it, into into
// as the store's decoder (json-iterator in its encoding/json-compatible
// mode) would, except that every string of into points into data instead
// of being a copy. It reports false when it did not decode, and into is
// then in an unspecified state: data has a backslash (an escape, which a
// copy must resolve), a control character, or is not JSON for into.
//
// The caller must never change data afterwards and keeps all of it alive
// for as long as into is: the watch cache, whose items keep their object
// both decoded and as JSON inside their immutable frame, so that the
// object's strings cost nothing more.
func DecodeAliasing(data []byte, into any) bool {
	for _, c := range data {
		if c == '\\' || c < ' ' {
			return false
		}
	}
	iter := aliasAPI.BorrowIterator(data)
	defer aliasAPI.ReturnIterator(iter)
	iter.Attachment = aliasMark
	defer func() { iter.Attachment = nil }()
	iter.ReadVal(into)
	if iter.Error != nil {
		return false
	}
	// Only whitespace may follow: the end of input is an io.EOF.
	return iter.WhatIsNext() == jsoniter.InvalidValue && errors.Is(iter.Error, io.EOF)
}

// aliasAPI is jsoniter.ConfigCompatibleWithStandardLibrary's settings with
// strings read by aliasingString.
var aliasAPI = func() jsoniter.API {
	api := jsoniter.Config{EscapeHTML: true, SortMapKeys: true, ValidateJsonRawMessage: true}.Froze()
	api.RegisterExtension(&aliasExtension{})
	return api
}()

// aliasMark is the attachment of the iterators whose input may be aliased:
// json-iterator makes iterators of its own over temporary bytes (for
// ",string" fields), and strings read from those must be copied.
var aliasMark = new(byte)

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[stdencoding.TextUnmarshaler]()
)

// aliasExtension reads every string kind that does not decode itself (a
// json.Unmarshaler or encoding.TextUnmarshaler) with aliasingString.
type aliasExtension struct{ jsoniter.DummyExtension }

func (*aliasExtension) CreateDecoder(typ reflect2.Type) jsoniter.ValDecoder {
	t := typ.Type1()
	if t.Kind() != reflect.String {
		return nil
	}
	for _, u := range []reflect.Type{jsonUnmarshaler, textUnmarshaler} {
		if t.Implements(u) || reflect.PointerTo(t).Implements(u) {
			return nil
		}
	}
	return aliasingString{}
}

// aliasingString decodes a JSON string as a Go string over the input's
// bytes when the iterator reads an aliasable input, and as a copy
// otherwise; null is "", as json-iterator's own string decoder has it.
type aliasingString struct{}

func (aliasingString) Decode(ptr unsafe.Pointer, iter *jsoniter.Iterator) {
	switch {
	case iter.ReadNil():
		*(*string)(ptr) = ""
	case iter.Attachment != aliasMark:
		*(*string)(ptr) = iter.ReadString()
	default:
		// Without a backslash in the input (DecodeAliasing checked), the
		// bytes between the quotes are the string.
		b := iter.ReadStringAsSlice()
		*(*string)(ptr) = unsafe.String(unsafe.SliceData(b), len(b))
	}
}
