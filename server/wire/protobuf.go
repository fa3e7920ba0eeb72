package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Protobuf is application/vnd.kubernetes.protobuf: Kubernetes' protobuf
// envelope (runtime.Unknown after the "k8s\x00" magic), for kinds whose Go
// types have protobuf methods (k8s.io/api's, and apis/ kinds generated
// with go-to-protobuf). Watches are length-delimited metav1.WatchEvents.
const Protobuf Format = CBOR + 1

// protobufMagic starts every protobuf document Kubernetes writes.
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// ErrNoProtobuf is returned for an object whose type has no protobuf
// methods.
var ErrNoProtobuf = errors.New("wire: the type has no protobuf encoding")

// ProtoMessage is what generated protobuf types implement (gogo's
// methods, as k8s.io/api has them).
type ProtoMessage interface {
	Size() int
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

// HasProtobuf reports whether obj's type can be encoded as protobuf.
func HasProtobuf(obj any) bool {
	_, ok := obj.(ProtoMessage)
	return ok
}

// EncodeObjectProtobuf returns obj, of kind gvk, in Kubernetes' protobuf
// envelope: the bytes apimachinery's protobuf serializer writes for it.
func EncodeObjectProtobuf(obj runtime.Object, gvk schema.GroupVersionKind) ([]byte, error) {
	m, ok := obj.(ProtoMessage)
	if !ok {
		return nil, ErrNoProtobuf
	}
	raw, err := m.Marshal()
	if err != nil {
		return nil, err
	}
	return envelope(gvk.GroupVersion().String(), gvk.Kind, raw)
}

func envelope(apiVersion, kind string, raw []byte) ([]byte, error) {
	u := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: apiVersion, Kind: kind}, Raw: raw}
	out := make([]byte, len(protobufMagic)+u.Size())
	copy(out, protobufMagic)
	if _, err := u.MarshalTo(out[len(protobufMagic):]); err != nil {
		return nil, err
	}
	return out, nil
}

// ProtobufMessage returns the message inside a document EncodeObjectProtobuf
// wrote, as a sub-slice: what a list carries for each item.
func ProtobufMessage(doc []byte) ([]byte, error) {
	if len(doc) < len(protobufMagic) || string(doc[:len(protobufMagic)]) != string(protobufMagic) {
		return nil, errors.New("wire: not a protobuf document")
	}
	b := doc[len(protobufMagic):]
	for len(b) > 0 {
		tag := b[0]
		n, k := binary.Uvarint(b[1:])
		if k <= 0 || tag&7 != 2 || uint64(len(b)-1-k) < n {
			return nil, errors.New("wire: malformed protobuf envelope")
		}
		field := b[1+k : 1+k+int(n)]
		if tag>>3 == 2 { // runtime.Unknown.Raw
			return field, nil
		}
		b = b[1+k+int(n):]
	}
	return nil, errors.New("wire: protobuf envelope without a message")
}

// AppendProtobufWatchFrame appends one watch event as client-go reads a
// protobuf watch: a 4-byte big-endian length, then metav1.WatchEvent{type,
// object} whose object is objectDoc, an EncodeObjectProtobuf document,
// which ends the frame.
func AppendProtobufWatchFrame(dst []byte, eventType string, objectDoc []byte) []byte {
	ext := 1 + uvarintSize(uint64(len(objectDoc))) + len(objectDoc) // RawExtension{Raw}
	n := 1 + uvarintSize(uint64(len(eventType))) + len(eventType) + 1 + uvarintSize(uint64(ext)) + ext
	dst = binary.BigEndian.AppendUint32(dst, uint32(n))
	dst = append(dst, 0x0a) // WatchEvent.Type
	dst = binary.AppendUvarint(dst, uint64(len(eventType)))
	dst = append(dst, eventType...)
	dst = append(dst, 0x12) // WatchEvent.Object
	dst = binary.AppendUvarint(dst, uint64(ext))
	dst = append(dst, 0x0a) // RawExtension.Raw
	dst = binary.AppendUvarint(dst, uint64(len(objectDoc)))
	return append(dst, objectDoc...)
}

// ProtobufListWriter streams a list in Kubernetes' protobuf envelope item
// by item: the bytes apimachinery's protobuf serializer writes for the
// typed list (metadata is field 1, items field 2, as go-to-protobuf
// numbers every list). The envelope carries the list's length first, so
// the items' sizes are given up front.
type ProtobufListWriter struct {
	w     io.Writer
	sizes []int
	next  int
	buf   []byte
}

// NewProtobufListWriter starts a list of kind listKind with metadata lm and
// items of the given encoded sizes on w.
func NewProtobufListWriter(w io.Writer, apiVersion, listKind string, lm *metav1.ListMeta, sizes []int) (*ProtobufListWriter, error) {
	meta, err := lm.Marshal()
	if err != nil {
		return nil, err
	}
	total := 1 + uvarintSize(uint64(len(meta))) + len(meta)
	for _, n := range sizes {
		total += 1 + uvarintSize(uint64(n)) + n
	}
	tm := runtime.TypeMeta{APIVersion: apiVersion, Kind: listKind}
	tmBytes, err := tm.Marshal()
	if err != nil {
		return nil, err
	}
	b := append([]byte(nil), protobufMagic...)
	b = append(b, 0x0a) // Unknown.TypeMeta
	b = binary.AppendUvarint(b, uint64(len(tmBytes)))
	b = append(b, tmBytes...)
	b = append(b, 0x12) // Unknown.Raw: the list
	b = binary.AppendUvarint(b, uint64(total))
	b = append(b, 0x0a) // List.Metadata
	b = binary.AppendUvarint(b, uint64(len(meta)))
	b = append(b, meta...)
	l := &ProtobufListWriter{w: w, sizes: sizes}
	_, err = w.Write(b)
	return l, err
}

// Write writes the next item, one message (ProtobufMessage of a document,
// or a Marshal), of the size given for it.
func (l *ProtobufListWriter) Write(msg []byte) error {
	if l.next >= len(l.sizes) || len(msg) != l.sizes[l.next] {
		return fmt.Errorf("wire: protobuf list item %d is not of the announced size", l.next)
	}
	l.next++
	l.buf = append(l.buf[:0], 0x12) // List.Items
	l.buf = binary.AppendUvarint(l.buf, uint64(len(msg)))
	if _, err := l.w.Write(l.buf); err != nil {
		return err
	}
	_, err := l.w.Write(msg)
	return err
}

// Close ends the list: the envelope's empty content encoding and type.
func (l *ProtobufListWriter) Close() error {
	if l.next != len(l.sizes) {
		return fmt.Errorf("wire: protobuf list of %d items ended after %d", len(l.sizes), l.next)
	}
	_, err := l.w.Write([]byte{0x1a, 0x00, 0x22, 0x00})
	return err
}

func uvarintSize(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// EncodeObjectAs is EncodeObjectCBOR or EncodeObjectProtobuf, by f.
func EncodeObjectAs(f Format, obj runtime.Object, gvk schema.GroupVersionKind) ([]byte, error) {
	switch f {
	case CBOR:
		return EncodeObjectCBOR(obj, gvk)
	case Protobuf:
		return EncodeObjectProtobuf(obj, gvk)
	}
	return nil, fmt.Errorf("wire: unknown format %d", f)
}

// NewWatchFrameAs returns the watch frame of an event of type eventType
// carrying obj, an EncodeObjectAs(f) document, at its exact size; obj
// ends the frame, so frame[len(frame)-len(obj):] is obj.
func NewWatchFrameAs(f Format, eventType string, obj []byte) []byte {
	if f == Protobuf {
		return AppendProtobufWatchFrame(make([]byte, 0, 4+3*binary.MaxVarintLen32+len(eventType)+len(obj)), eventType, obj)
	}
	return AppendCBORWatchFrame(make([]byte, 0, CBORWatchFrameSize(eventType, obj)), eventType, obj)
}
