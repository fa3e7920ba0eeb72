package wire

import (
	"errors"
	"io"
	"testing"

	jsoniter "github.com/json-iterator/go"
	kjson "sigs.k8s.io/json"
)

// The encode benchmarks back the choice of encoding/json for EncodeObject:
// compare BenchmarkEncodeObject with BenchmarkEncodeJSONIterator.

func BenchmarkEncodeObject(b *testing.B) {
	obj := sampleThing()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeObject(obj, thingGVK); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeJSONIterator(b *testing.B) {
	obj := sampleThing()
	obj.SetGroupVersionKind(thingGVK)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := jsoniter.ConfigCompatibleWithStandardLibrary.Marshal(obj); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkObjectWriter(b *testing.B) {
	obj := sampleThing()
	w := NewObjectWriter(io.Discard, thingGVK)
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Write(obj); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWatchFrame is the per-event cost of a watch whose producer did
// not pre-encode: encode the object, wrap it in a frame.
func BenchmarkWatchFrame(b *testing.B) {
	obj := sampleThing()
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		data, err := EncodeObject(obj, thingGVK)
		if err != nil {
			b.Fatal(err)
		}
		buf = AppendWatchFrame(buf[:0], "MODIFIED", data)
	}
}

// The decode benchmarks back the json-iterator fast path: compare with the
// sigs.k8s.io/json reference (BenchmarkDecodeReference*).

func BenchmarkDecodeStrict(b *testing.B) {
	benchDecode(b, func(data []byte, into *thing) error {
		_, err := Decoder{Strict: true}.Decode(data, into)
		return err
	})
}

func BenchmarkDecodeLenient(b *testing.B) {
	benchDecode(b, func(data []byte, into *thing) error {
		_, err := Decoder{}.Decode(data, into)
		return err
	})
}

func BenchmarkDecodeReferenceStrict(b *testing.B) {
	benchDecode(b, func(data []byte, into *thing) error {
		_, err := kjson.UnmarshalStrict(data, into)
		return err
	})
}

func BenchmarkDecodeReferenceLenient(b *testing.B) {
	benchDecode(b, func(data []byte, into *thing) error {
		return kjson.UnmarshalCaseSensitivePreserveInts(data, into)
	})
}

func benchDecode(b *testing.B, decode func([]byte, *thing) error) {
	benchDecodeOf(b, sampleThing(), decode)
}

func benchDecodeOf(b *testing.B, obj *thing, decode func([]byte, *thing) error) {
	data, err := EncodeObject(obj, thingGVK)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var t thing
		if err := decode(data, &t); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeAliasing is the watch cache's second decoding of each
// object it keeps (from its frame, strings not copied): compare with
// BenchmarkDecodeStore, the store's decoding of the same JSON (the sample
// without its one annotation that needs escapes).
func BenchmarkDecodeAliasing(b *testing.B) {
	benchDecodeOf(b, unescapedThing(), func(data []byte, into *thing) error {
		if !DecodeAliasing(data, into) {
			return errors.New("refused")
		}
		return nil
	})
}

func BenchmarkDecodeStore(b *testing.B) {
	benchDecodeOf(b, unescapedThing(), func(data []byte, into *thing) error {
		return jsoniter.ConfigCompatibleWithStandardLibrary.Unmarshal(data, into)
	})
}

// unescapedThing is the sample without its one annotation that needs
// escapes in JSON.
func unescapedThing() *thing {
	obj := sampleThing()
	delete(obj.Annotations, "example.com/notes")
	return obj
}
