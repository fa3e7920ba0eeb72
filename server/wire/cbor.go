package wire

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	cbor "k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
)

// Format is an encoding a response can be written in besides JSON, which
// every producer writes eagerly.
type Format int

const (
	// CBOR is application/cbor (RFC 8949) as k8s.io/apimachinery's CBOR
	// serializer writes it, watch events as application/cbor-seq.
	CBOR Format = iota + 1
)

// cborSelfDescribed is the self-described CBOR tag (55799) that
// apimachinery's serializer puts before every document it writes, and
// that its decoder recognizes CBOR by.
var cborSelfDescribed = []byte{0xd9, 0xd9, 0xf7}

// CBOR major types, as the top three bits of a data item's first byte.
const (
	cborBytes = 2 << 5
	cborArray = 4 << 5
	cborMap   = 5 << 5
)

// EncodeObjectCBOR returns obj as a CBOR document with kind and apiVersion
// set to gvk: the bytes apimachinery's CBOR serializer writes for it (its
// deterministic mode: map keys sorted, as the watch cache needs one
// encoding for every watcher). obj is never modified, as for EncodeObject.
func EncodeObjectCBOR(obj runtime.Object, gvk schema.GroupVersionKind) ([]byte, error) {
	return EncodeCBOR(withKind(obj, gvk))
}

// EncodeCBOR returns v as a CBOR document, self-described tag first: what
// the serializer writes for an object that already carries its kind (a
// Status, a Table, a PartialObjectMetadata).
func EncodeCBOR(v any) ([]byte, error) {
	body, err := cbor.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(append(make([]byte, 0, len(cborSelfDescribed)+len(body)), cborSelfDescribed...), body...), nil
}

// AppendCBORWatchFrame appends one watch event as client-go reads an
// application/cbor-seq watch: the CBOR of metav1.WatchEvent{type, object}
// (the object embedded as it is, self-described tag included), which is
// one item of the sequence. objectCBOR must come from EncodeObjectCBOR or
// EncodeCBOR. The object ends the frame, so a frame's last len(objectCBOR)
// bytes are the object.
func AppendCBORWatchFrame(dst []byte, eventType string, objectCBOR []byte) []byte {
	dst = append(dst, cborSelfDescribed...)
	dst = appendCBORHead(dst, cborMap, 2)
	// Keys sorted as the deterministic encoder sorts them: by length first.
	dst = appendCBORString(dst, "type")
	dst = appendCBORString(dst, eventType)
	dst = appendCBORString(dst, "object")
	return append(dst, objectCBOR...)
}

// CBORWatchFrameSize is the length of the frame AppendCBORWatchFrame
// produces.
func CBORWatchFrameSize(eventType string, objectCBOR []byte) int {
	return len(cborSelfDescribed) + 1 + 5 + 7 + cborHeadSize(uint64(len(eventType))) + len(eventType) + len(objectCBOR)
}

// CBORToJSON converts a CBOR request body (one data item, the
// self-described tag optional) to JSON, so that the write paths read one
// syntax: fields, strictness and schema are then checked as for a JSON
// body. apimachinery's decoding rules apply: duplicate map keys, map keys
// that are not strings, and anything after the data item are errors.
func CBORToJSON(data []byte) ([]byte, error) {
	var v any
	if err := cbor.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// IsCBOR reports whether data starts as apimachinery's CBOR documents do.
func IsCBOR(data []byte) bool {
	return len(data) >= len(cborSelfDescribed) && string(data[:len(cborSelfDescribed)]) == string(cborSelfDescribed)
}

// CBORListWriter streams a list as one CBOR document, item by item: the
// bytes apimachinery's CBOR serializer writes for the typed list (its
// streaming collection encoder's key order: kind, items, metadata,
// apiVersion), holding one item at a time.
type CBORListWriter struct {
	w   io.Writer
	gvk schema.GroupVersionKind
	buf []byte
}

// NewCBORListWriter starts a list of n items of kind listKind (items of
// kind gvk) on w.
func NewCBORListWriter(w io.Writer, listKind string, gvk schema.GroupVersionKind, n int) (*CBORListWriter, error) {
	l := &CBORListWriter{w: w, gvk: gvk}
	b := append([]byte(nil), cborSelfDescribed...)
	b = appendCBORHead(b, cborMap, 4)
	b = appendCBORString(b, "kind")
	b = appendCBORString(b, listKind)
	b = appendCBORString(b, "items")
	b = appendCBORHead(b, cborArray, uint64(n))
	_, err := w.Write(b)
	return l, err
}

// Write encodes one item with the list's kind and apiVersion.
func (l *CBORListWriter) Write(obj runtime.Object) error {
	body, err := cbor.Marshal(withKind(obj, l.gvk))
	if err != nil {
		return err
	}
	_, err = l.w.Write(body)
	return err
}

// WriteValue encodes one item as it is (a PartialObjectMetadata).
func (l *CBORListWriter) WriteValue(v any) error {
	body, err := cbor.Marshal(v)
	if err != nil {
		return err
	}
	_, err = l.w.Write(body)
	return err
}

// WriteEncoded writes one item already encoded by EncodeObjectCBOR.
func (l *CBORListWriter) WriteEncoded(objectCBOR []byte) error {
	if !IsCBOR(objectCBOR) {
		return fmt.Errorf("wire: list item is not a CBOR document")
	}
	_, err := l.w.Write(objectCBOR[len(cborSelfDescribed):])
	return err
}

// Close ends the list with its metadata and apiVersion.
func (l *CBORListWriter) Close(lm *metav1.ListMeta, apiVersion string) error {
	meta, err := cbor.Marshal(lm)
	if err != nil {
		return err
	}
	l.buf = appendCBORString(l.buf[:0], "metadata")
	l.buf = append(l.buf, meta...)
	l.buf = appendCBORString(l.buf, "apiVersion")
	l.buf = appendCBORString(l.buf, apiVersion)
	_, err = l.w.Write(l.buf)
	return err
}

// appendCBORHead appends a data item's head: its major type and argument
// n in the shortest form, as RFC 8949's preferred serialization has it.
func appendCBORHead(dst []byte, major byte, n uint64) []byte {
	switch {
	case n < 24:
		return append(dst, major|byte(n))
	case n <= 0xff:
		return append(dst, major|24, byte(n))
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(dst, major|25), uint16(n))
	case n <= 0xffffffff:
		return binary.BigEndian.AppendUint32(append(dst, major|26), uint32(n))
	default:
		return binary.BigEndian.AppendUint64(append(dst, major|27), n)
	}
}

func cborHeadSize(n uint64) int {
	switch {
	case n < 24:
		return 1
	case n <= 0xff:
		return 2
	case n <= 0xffff:
		return 3
	case n <= 0xffffffff:
		return 5
	default:
		return 9
	}
}

// appendCBORString appends s as apimachinery encodes Go strings and field
// names: as a byte string (major type 2), so that any Go string, valid
// UTF-8 or not, round-trips.
func appendCBORString(dst []byte, s string) []byte {
	return append(appendCBORHead(dst, cborBytes, uint64(len(s))), s...)
}
