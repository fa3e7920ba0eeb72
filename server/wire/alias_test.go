package wire

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	jsoniter "github.com/json-iterator/go"
)

// upperString decodes itself: DecodeAliasing must leave it to its own
// UnmarshalJSON, which copies.
type upperString string

func (u *upperString) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*u = upperString(strings.ToUpper(s))
	return nil
}

type phase string

// aliasSample has every way a string is held: plain, named, in a map (key
// and value), a slice, a pointer, nested, with ",string", self-decoding.
type aliasSample struct {
	Name     string            `json:"name"`
	Phase    phase             `json:"phase,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
	Tags     []string          `json:"tags,omitempty"`
	Ref      *string           `json:"ref,omitempty"`
	Inner    *aliasSample      `json:"inner,omitempty"`
	Quoted   string            `json:"quoted,omitempty,string"`
	Upper    upperString       `json:"upper,omitempty"`
	Size     int               `json:"size,omitempty"`
	Anything any               `json:"anything,omitempty"`
}

// within reports whether s's bytes lie inside b.
func within(s string, b []byte) bool {
	if len(s) == 0 || len(b) == 0 {
		return false
	}
	p, start := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= start && p+uintptr(len(s)) <= start+uintptr(len(b))
}

// decodeLikeTheStore is the store's decoding, which DecodeAliasing must
// match.
func decodeLikeTheStore(data []byte) (*aliasSample, error) {
	var s aliasSample
	err := jsoniter.ConfigCompatibleWithStandardLibrary.Unmarshal(data, &s)
	return &s, err
}

func TestDecodeAliasingPointsIntoTheInput(t *testing.T) {
	ref := "the-ref"
	in := aliasSample{
		Name: "plain", Phase: "Running", Labels: map[string]string{"app": "web", "tier": ""},
		Tags: []string{"a", "bé"}, Ref: &ref, Inner: &aliasSample{Name: "inner"},
		Upper: "shout", Size: 3, Anything: "free", // a ",string" string is escaped quotes: refused

	}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var got aliasSample
	if !DecodeAliasing(data, &got) {
		t.Fatalf("%s did not decode", data)
	}
	want, err := decodeLikeTheStore(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&got, want) {
		t.Fatalf("got %+v, the store's decoder %+v", got, *want)
	}
	aliased := map[string]string{"name": got.Name, "phase": string(got.Phase), "label": got.Labels["app"],
		"tag": got.Tags[1], "ref": *got.Ref, "inner": got.Inner.Name}
	for k := range got.Labels {
		aliased["key "+k] = k
	}
	for what, s := range aliased {
		if !within(s, data) {
			t.Errorf("%s %q is a copy, not the input's bytes", what, s)
		}
	}
	// What decodes through something else than the string decoder owns its bytes.
	for what, s := range map[string]string{"upper": string(got.Upper), "any": got.Anything.(string)} {
		if within(s, data) {
			t.Errorf("%s %q points into the input", what, s)
		}
	}
	if got.Upper != "SHOUT" {
		t.Errorf("upper = %q, its UnmarshalJSON was not used", got.Upper)
	}
}

func TestDecodeAliasingRefuses(t *testing.T) {
	for _, data := range []string{
		`{"name":"a\"b"}`,     // an escape
		`{"name":"a\u003cb"}`, // what the encoder writes for <
		"{\"name\":\"a\tb\"}", // a raw control character, which the store's decoder rejects
		`{"name":5}`,          // not this type's JSON
		`{"name":"a"`,         // cut short
		``,
	} {
		var got aliasSample
		if DecodeAliasing([]byte(data), &got) {
			t.Errorf("%q decoded: %+v", data, got)
		}
	}
	var got aliasSample
	if !DecodeAliasing([]byte(`{"name":null,"labels":{"a":null}}`), &got) || got.Name != "" || got.Labels["a"] != "" {
		t.Errorf("nulls: %+v", got)
	}
}

// FuzzDecodeAliasing: on any input, DecodeAliasing decodes exactly what
// the store's decoder does, or refuses only input with a backslash or a
// control character; what it decodes never points outside the input.
func FuzzDecodeAliasing(f *testing.F) {
	f.Add([]byte(`{"name":"x","labels":{"k":"v"},"tags":["t"],"inner":{"name":"i","quoted":"\"q\""}}`))
	f.Add([]byte(`{"NAME":"x","phase":"P","upper":"u","anything":{"a":["b"]}}`))
	f.Add([]byte(`{"name":"\ud800","ref":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		data = data[:len(data):len(data)]
		var got aliasSample
		ok := DecodeAliasing(data, &got)
		want, err := decodeLikeTheStore(data)
		clean := !strings.ContainsFunc(string(data), func(r rune) bool { return r == '\\' || r < ' ' })
		switch {
		case ok && err != nil:
			t.Fatalf("decoded what the store's decoder rejects (%v): %q", err, data)
		case !ok && err == nil && clean:
			t.Fatalf("refused what the store's decoder takes: %q", data)
		case ok && !reflect.DeepEqual(&got, want):
			t.Fatalf("%q: got %+v, the store's decoder %+v", data, got, *want)
		}
		if !ok {
			return
		}
		for _, s := range stringsOf(&got) {
			if s != "" && !within(s, data) {
				t.Fatalf("%q: %q is not the input's bytes", data, s)
			}
		}
	})
}

// stringsOf lists the strings of s that the string decoder reads.
func stringsOf(s *aliasSample) []string {
	if s == nil {
		return nil
	}
	out := append([]string{s.Name, string(s.Phase)}, s.Tags...)
	for k, v := range s.Labels {
		out = append(out, k, v)
	}
	if s.Ref != nil {
		out = append(out, *s.Ref)
	}
	return append(out, stringsOf(s.Inner)...)
}
