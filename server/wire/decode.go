package wire

import (
	"reflect"
	"unicode/utf8"

	jsoniter "github.com/json-iterator/go"
	kjson "sigs.k8s.io/json"
)

// Decoder decodes JSON request bodies into typed objects with Kubernetes'
// rules: field names match case-sensitively, and in strict mode fields the
// type does not declare and fields given twice are reported as strict
// errors ("unknown field \"spec.x\"", "duplicate field \"metadata.name\"").
//
// The common case, a well-formed body, is decoded by json-iterator, about
// twice as fast as encoding/json. Any failure is decoded again by
// sigs.k8s.io/json, the decoder kube-apiserver uses, so that error and
// strict-error messages are exactly upstream's. The zero Decoder is lenient;
// a Decoder is safe for concurrent use.
type Decoder struct {
	// Strict reports unknown and duplicate fields. Without it unknown fields
	// are dropped and the last of duplicate fields wins.
	Strict bool
}

// Decode decodes data into into, which must be a non-nil pointer. err is a
// syntax or type error and leaves into in an unspecified state. strict lists
// the strict-mode violations; with them into is still fully decoded, so a
// caller that only warns about them can go on using it.
func (d Decoder) Decode(data []byte, into any) (strict []error, err error) {
	fast := fastPathSafe(data)
	if d.Strict {
		if fast && strictAPI.Unmarshal(data, into) == nil && !hasDuplicateKeys(data) {
			return nil, nil
		}
		resetValue(into)
		return kjson.UnmarshalStrict(data, into)
	}
	if fast && lenientAPI.Unmarshal(data, into) == nil {
		return nil, nil
	}
	resetValue(into)
	return nil, kjson.UnmarshalCaseSensitivePreserveInts(data, into)
}

var (
	// lenientAPI mirrors apimachinery's former CaseSensitiveJSONIterator.
	lenientAPI = jsoniter.Config{
		EscapeHTML:             true,
		SortMapKeys:            true,
		ValidateJsonRawMessage: true,
		CaseSensitive:          true,
	}.Froze()
	// strictAPI fails on the first unknown field; the slow path then
	// collects all of them with their paths.
	strictAPI = jsoniter.Config{
		EscapeHTML:             true,
		SortMapKeys:            true,
		ValidateJsonRawMessage: true,
		CaseSensitive:          true,
		DisallowUnknownFields:  true,
	}.Froze()
)

// resetValue zeroes what into points to, so that the slow path decodes into
// a clean value rather than on top of the fast path's partial result.
func resetValue(into any) {
	v := reflect.ValueOf(into)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		v.Elem().SetZero()
	}
}

// fastPathSafe reports whether json-iterator decodes data exactly as
// sigs.k8s.io/json would. It keeps invalid UTF-8 as it is where
// encoding/json substitutes U+FFFD, and it accepts raw control characters
// (a NUL even ends the input, a newline passes inside a string) that
// encoding/json rejects; bodies with either take the slow path. Both are
// rare in real requests and the check is one cheap linear scan: outside
// strings only JSON whitespace may be a control character, inside none.
func fastPathSafe(data []byte) bool {
	inString := false
	for i := 0; i < len(data); i++ {
		b := data[i]
		switch {
		case inString && b == '\\':
			i++ // the escaped byte cannot end the string
		case b == '"':
			inString = !inString
		case b >= 0x20:
		case inString || (b != '\t' && b != '\n' && b != '\r'):
			return false
		}
	}
	return utf8.Valid(data)
}
