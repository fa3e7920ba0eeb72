package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	jsoniter "github.com/json-iterator/go"
)

// referenceEvent is the event as a full decoder reads it: the reference
// eventScanner is held to.
type referenceEvent struct {
	Type   string `json:"type"`
	Object struct {
		Metadata struct {
			Name            string            `json:"name"`
			ResourceVersion string            `json:"resourceVersion"`
			Labels          map[string]string `json:"labels"`
		} `json:"metadata"`
		Code    int    `json:"code"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
	} `json:"object"`
}

// referenceAPI matches keys exactly, as servers write them (encoding/json
// would also take "Type" for "type").
var referenceAPI = jsoniter.Config{CaseSensitive: true}.Froze()

// referenceEvents decodes every value of stream with json-iterator, and
// reports false if any does not decode as an event object.
func referenceEvents(stream []byte) ([]eventFields, bool) {
	iter := jsoniter.ParseBytes(referenceAPI, stream)
	var out []eventFields
	for iter.WhatIsNext() != jsoniter.InvalidValue {
		if iter.WhatIsNext() != jsoniter.ObjectValue {
			return nil, false
		}
		var r referenceEvent
		if iter.ReadVal(&r); iter.Error != nil {
			return nil, false
		}
		m := r.Object.Metadata
		seq, hasSeq := m.Labels[labelSeq]
		out = append(out, eventFields{typ: r.Type, name: m.Name, rv: m.ResourceVersion, seq: seq, hasSeq: hasSeq,
			marker: m.Labels[labelMarker], code: int64(r.Object.Code), reason: r.Object.Reason, message: r.Object.Message})
	}
	if !errors.Is(iter.Error, io.EOF) {
		return nil, false
	}
	return out, true
}

// scanAll reads every event of stream through r.
func scanAll(r io.Reader) ([]eventFields, error) {
	s := newEventScanner(r)
	var out []eventFields
	for {
		ev, err := s.next()
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

func sampleStream() []byte {
	var b bytes.Buffer
	for i := range 40 {
		fmt.Fprintf(&b, `{"type":"MODIFIED","object":{"kind":"Database","apiVersion":"example.apiloom.dev/v1","metadata":{"name":"db-%d","namespace":"ns","resourceVersion":"%d","labels":{"app":"x","%s":"%d"},"annotations":{"load-payload":%q,"quoted":"a \"b\" {c} [d] \\\\"},"managedFields":[{"manager":"m","fieldsV1":{"f:spec":{}}}]},"spec":{"replicas":3,"ok":true,"none":null,"ratio":1.5e3}}}`,
			i, 100+i, labelSeq, i, strings.Repeat("p", 50*i))
		b.WriteString([]string{"\n", "", " \r\n\t"}[i%3])
	}
	b.WriteString(`{"type":"ERROR","object":{"kind":"Status","status":"Failure","message":"too old","reason":"Expired","code":410}}`)
	return b.Bytes()
}

// TestScanEventsLikeADecoder: the scanner reads what json-iterator reads,
// whatever the reads' sizes (one byte at a time, frames split anywhere),
// and frames larger than its first buffer.
func TestScanEventsLikeADecoder(t *testing.T) {
	stream := sampleStream()
	big := fmt.Sprintf(`{"type":"ADDED","object":{"metadata":{"name":"big","labels":{"%s":"tok"}},"spec":{"blob":%q}}}`, labelMarker, strings.Repeat("z", 3*scanBufSize))
	stream = append([]byte(big), stream...)
	want, ok := referenceEvents(stream)
	if !ok || len(want) != 42 {
		t.Fatalf("the reference read %d events (ok %v)", len(want), ok)
	}
	for name, r := range map[string]io.Reader{
		"whole":       bytes.NewReader(stream),
		"byte a time": iotest.OneByteReader(bytes.NewReader(stream)),
		"half":        iotest.HalfReader(bytes.NewReader(stream)),
	} {
		got, err := scanAll(r)
		if !errors.Is(err, io.EOF) {
			t.Fatalf("%s: %v", name, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s:\n got %v\nwant %v", name, got, want)
		}
	}
}

func TestScanEventsRejects(t *testing.T) {
	for _, stream := range []string{
		`[1]`, `"x"`, `xyz`, `{"type":5}`, `{"type":"A",}`, `{"type" "A"}`, `{"type":"A"}}`,
		`{"object":{"metadata":{"name":"a","resourceVersion":7}}}`, `{"object":{"code":"x"}}`, `{"a":tru}`,
	} {
		if got, err := scanAll(strings.NewReader(stream)); err == nil || errors.Is(err, io.EOF) && len(got) > 0 {
			t.Errorf("%s: %v, %v", stream, got, err)
		}
	}
	if _, err := scanAll(strings.NewReader(`{"type":"ADDED","object":{`)); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut short: %v", err)
	}
}

// FuzzScanEvents: on any stream json-iterator decodes as events, the
// scanner reads the same events, split into reads of any size; on any
// input it ends.
func FuzzScanEvents(f *testing.F) {
	f.Add(sampleStream()[:2000], uint8(7))
	f.Add([]byte(`{"type":"ADDED","object":{"metadata":{"name":"a\u00e9\"","resourceVersion":"1","labels":null}}} {"type":"BOOKMARK"}`), uint8(1))
	f.Add([]byte(`{"object":{"metadata":{"labels":{"`+labelSeq+`":"12","`+labelMarker+`":null}},"code":-3}}`), uint8(3))
	f.Fuzz(func(t *testing.T, stream []byte, chunk uint8) {
		got, err := scanAll(&chunked{data: stream, n: int(chunk)%16 + 1})
		want, ok := referenceEvents(stream)
		if !ok {
			return
		}
		if !errors.Is(err, io.EOF) {
			t.Fatalf("%q: %v after %v; the reference read %v", stream, err, got, want)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%q:\n got %v\nwant %v", stream, got, want)
		}
	})
}

// chunked reads data n bytes at a time.
type chunked struct {
	data []byte
	n    int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.data)
	c.data = c.data[k:]
	return k, nil
}

// BenchmarkReadEvents is the load generator's cost per watch event of the
// fan-out rounds' size; compare with BenchmarkReadEventsReference, a full
// decoder's.
func BenchmarkReadEvents(b *testing.B) {
	benchEvents(b, func(stream []byte) int {
		n := 0
		if err := readEvents(bytes.NewReader(stream), func(*watchEvent) { n++ }); !errors.Is(err, io.EOF) {
			b.Fatal(err)
		}
		return n
	})
}

func BenchmarkReadEventsReference(b *testing.B) {
	benchEvents(b, func(stream []byte) int {
		evs, ok := referenceEvents(stream)
		if !ok {
			b.Fatal("reference failed")
		}
		return len(evs)
	})
}

func benchEvents(b *testing.B, read func([]byte) int) {
	var stream bytes.Buffer
	for i := range 100 {
		fmt.Fprintf(&stream, `{"type":"MODIFIED","object":{"kind":"Database","apiVersion":"example.apiloom.dev/v1","metadata":{"name":"load-fanout-%03d","namespace":"bench","uid":"1e279366-766d-40bd-a574-f558b73604fb","resourceVersion":"%d","generation":2,"creationTimestamp":"2026-11-25T02:14:44Z","labels":{"%s":"%d"},"annotations":{"load-payload":%q,"load.apiloom.dev/sent":"1764037284000000000"}},"spec":{"engine":"postgres","replicas":3}}}`+"\n",
			i, 1000+i, labelSeq, i, payload("x", 1024))
	}
	b.SetBytes(int64(stream.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if read(stream.Bytes()) != 100 {
			b.Fatal("events lost")
		}
	}
}
