package wire

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	kjson "sigs.k8s.io/json"
)

func TestDecoder(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		strict     bool
		wantErr    string   // substring of the error; "" for none
		wantStrict []string // strict errors, in order
		check      func(t *testing.T, got *thing)
	}{
		{
			name: "lenient drops unknown fields",
			body: `{"metadata":{"name":"a"},"spec":{"engine":"pg","x":1}}`,
			check: func(t *testing.T, got *thing) {
				if got.Name != "a" || got.Spec.Engine != "pg" {
					t.Fatalf("decoded %+v", got)
				}
			},
		},
		{
			name:       "strict reports unknown fields with their paths",
			body:       `{"metadata":{"name":"a","bogus":true},"spec":{"engine":"pg","x":1}}`,
			strict:     true,
			wantStrict: []string{`unknown field "metadata.bogus"`, `unknown field "spec.x"`},
			check: func(t *testing.T, got *thing) {
				if got.Name != "a" || got.Spec.Engine != "pg" {
					t.Fatalf("strict errors must not stop decoding: %+v", got)
				}
			},
		},
		{
			name:       "strict reports duplicate fields",
			body:       `{"metadata":{"name":"a"},"spec":{"engine":"pg","engine":"mysql"}}`,
			strict:     true,
			wantStrict: []string{`duplicate field "spec.engine"`},
			check: func(t *testing.T, got *thing) {
				if got.Spec.Engine != "mysql" {
					t.Fatalf("last duplicate must win: %+v", got.Spec)
				}
			},
		},
		{
			name:       "field names are case sensitive",
			body:       `{"metadata":{"name":"a"},"Spec":{"engine":"pg"}}`,
			strict:     true,
			wantStrict: []string{`unknown field "Spec"`},
			check: func(t *testing.T, got *thing) {
				if got.Spec.Engine != "" {
					t.Fatalf("Spec must not match spec: %+v", got.Spec)
				}
			},
		},
		{
			name: "lenient is case sensitive too",
			body: `{"Spec":{"engine":"pg"}}`,
			check: func(t *testing.T, got *thing) {
				if got.Spec.Engine != "" {
					t.Fatalf("Spec must not match spec: %+v", got.Spec)
				}
			},
		},
		{
			name:    "syntax error has encoding/json's message",
			body:    `{"metadata":{"name":"a"`,
			wantErr: "unexpected end of JSON input",
		},
		{
			name:    "type error names the field",
			body:    `{"spec":{"replicas":"three"}}`,
			strict:  true,
			wantErr: `cannot unmarshal string into Go struct field thingSpec.spec.replicas of type int32`,
		},
		{
			name:    "trailing data is an error",
			body:    `{"spec":{}} {}`,
			wantErr: "invalid character",
		},
		{
			name:       "a big label map is checked for duplicates",
			body:       `{"metadata":{"labels":{` + manyLabels(40) + `,"k7":"again"}}}`,
			strict:     true,
			wantStrict: []string{`duplicate field "metadata.labels.k7"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got thing
			strict, err := Decoder{Strict: tc.strict}.Decode([]byte(tc.body), &got)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			var msgs []string
			for _, e := range strict {
				msgs = append(msgs, e.Error())
			}
			if !reflect.DeepEqual(msgs, tc.wantStrict) {
				t.Fatalf("strict = %q, want %q", msgs, tc.wantStrict)
			}
			if tc.check != nil {
				tc.check(t, &got)
			}
		})
	}
}

func manyLabels(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"k%d":"v"`, i)
	}
	return strings.Join(parts, ",")
}

func TestDecodeRoundTrip(t *testing.T) {
	want := sampleThing()
	data, err := EncodeObject(want, thingGVK)
	if err != nil {
		t.Fatal(err)
	}
	var got thing
	if strict, err := (Decoder{Strict: true}).Decode(data, &got); err != nil || len(strict) > 0 {
		t.Fatalf("decode: %v %v", strict, err)
	}
	want.SetGroupVersionKind(thingGVK)
	if !reflect.DeepEqual(&got, want) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", &got, want)
	}
}

// FuzzDecoder checks the fast path against sigs.k8s.io/json, the decoder
// kube-apiserver uses: for every input both must agree on success, on the
// decoded value and on the strict errors.
func FuzzDecoder(f *testing.F) {
	seed, _ := EncodeObject(sampleThing(), thingGVK)
	f.Add(seed)
	for _, s := range []string{
		`{}`, `null`, `[]`, `{"spec":{"engine":"a","engine":"b"}}`, `{"Spec":{}}`, `{"spec":{"x":1}}`,
		`{"metadata":{"labels":{"a":"b","a":"c"}}}`, `{"spec":{"limit":9007199254740993}}`, `{"spec":{"replicas":1.5}}`,
		`{"metadata":{"creationTimestamp":"2024-01-01T00:00:00Z"}}`, `{"spec":{"zones":[1]}}`, `{"spec":{"params":null}}`,
		`{"status":{"conditions":[{"type":"A","type":"B"}]}}`, "{\"metadata\":{\"name\":\"\xff\"}}", `{"spec":{"engine":"\ud800"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, strictMode := range []bool{false, true} {
			var got, want thing
			gotStrict, gotErr := Decoder{Strict: strictMode}.Decode(data, &got)
			var wantStrict []error
			var wantErr error
			if strictMode {
				wantStrict, wantErr = kjson.UnmarshalStrict(data, &want)
			} else {
				wantErr = kjson.UnmarshalCaseSensitivePreserveInts(data, &want)
			}
			if (gotErr == nil) != (wantErr == nil) {
				t.Fatalf("strict=%v %q: err %v, reference err %v", strictMode, data, gotErr, wantErr)
			}
			if gotErr != nil {
				if gotErr.Error() != wantErr.Error() {
					t.Fatalf("strict=%v %q: err %q, reference %q", strictMode, data, gotErr, wantErr)
				}
				continue
			}
			if fmt.Sprint(gotStrict) != fmt.Sprint(wantStrict) {
				t.Fatalf("strict=%v %q: strict errors %v, reference %v", strictMode, data, gotStrict, wantStrict)
			}
			g, _ := json.Marshal(&got)
			w, _ := json.Marshal(&want)
			if string(g) != string(w) {
				t.Fatalf("strict=%v %q: decoded\n%s\nreference\n%s", strictMode, data, g, w)
			}
		}
	})
}

func TestHasDuplicateKeys(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{`{}`, false},
		{`{"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]}`, false},
		{`{"a":1,"a":2}`, true},
		{`{"a":{"b":1,"b":2}}`, true},
		{`[{"x":1},{"y":2,"y":3}]`, true},
		{`{"a\u0062":1,"ab":2}`, true}, // escaped key: suspect
		{`{"a":"x\"y","b":"}"}`, false},
		{`{"a":1`, true},
		{`{"a":1} x`, true},
		{strings.Repeat("[", 200) + strings.Repeat("]", 200), true},
		{`{` + manyLabels(40) + `}`, false},
		{`{` + manyLabels(40) + `,"k39":"v"}`, true},
		{` 12 `, false},
	} {
		if got := hasDuplicateKeys([]byte(tc.in)); got != tc.want {
			t.Errorf("hasDuplicateKeys(%.60s) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
