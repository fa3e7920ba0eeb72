package formats

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	jsoniter "github.com/json-iterator/go"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/apiloom/apiloom/generated/clientset/versioned/scheme"
	"github.com/apiloom/apiloom/server/wire"
)

// TestCacheDecodingMatchesTheStore: the object the watch cache keeps,
// decoded from its frame's JSON with its strings pointing into it
// (wire.DecodeAliasing), is for every kind, filled at random, the object
// the store decodes from the same JSON. Half the rounds use strings that
// need no escape, which the cache decodes that way; the others mostly have
// escapes, which DecodeAliasing must refuse and nothing else.
func TestCacheDecodingMatchesTheStore(t *testing.T) {
	f := seededFiller(t)
	kinds, _ := served(t)
	for _, gvk := range kinds {
		t.Run(gvk.String(), func(t *testing.T) {
			aliased := 0
			for i := range 100 {
				obj, _ := scheme.Scheme.New(gvk)
				f.Fill(obj)
				if i%2 == 0 {
					plainStrings(reflect.ValueOf(obj))
				}
				data := mustEncode(t, wire.EncodeObject, obj, gvk)

				want, _ := scheme.Scheme.New(gvk)
				if err := jsoniter.ConfigCompatibleWithStandardLibrary.Unmarshal(data, want); err != nil {
					t.Fatalf("the store's decoder: %v", err)
				}
				got, _ := scheme.Scheme.New(gvk)
				if !wire.DecodeAliasing(data, got) {
					if bytes.IndexByte(data, '\\') < 0 {
						t.Fatalf("refused JSON without an escape: %s", data)
					}
					continue
				}
				aliased++
				if !equality.Semantic.DeepEqual(got, want) {
					t.Fatalf("decoded differently from the store:\n%#v\n%#v", got, want)
				}
			}
			if aliased == 0 {
				t.Fatal("no round decoded aliasing: the check checked nothing")
			}
		})
	}
}

// plainStrings rewrites every string v holds, map keys included, to one
// that JSON writes without an escape (its letters that would need one, or
// that are not ASCII, become 'x', but for é, which needs none).
func plainStrings(v reflect.Value) {
	plain := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == 'é' || r >= ' ' && r < 0x7f && !strings.ContainsRune(`"\<>&`, r) {
				return r
			}
			return 'x'
		}, s)
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			plainStrings(v.Elem())
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(plain(v.String()))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			plainStrings(v.Field(i))
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // bytes: base64 has no escape
		}
		for i := range v.Len() {
			plainStrings(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() || !v.CanSet() {
			return
		}
		m := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			k.Set(it.Key())
			e.Set(it.Value())
			plainStrings(k)
			plainStrings(e)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	}
}
