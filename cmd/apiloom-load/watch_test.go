package main

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReadEvents(t *testing.T) {
	stream := `{"type":"ADDED","object":{"kind":"Database","metadata":{"name":"m","resourceVersion":"10","labels":{"load.apiloom.dev/marker":"tok"}},"spec":{"version":"xyz"}}}
{"type":"BOOKMARK","object":{"kind":"Database","metadata":{"resourceVersion":"11"}}}
{"type":"MODIFIED","object":{"kind":"Database","metadata":{"name":"a","resourceVersion":"12","labels":{"load.apiloom.dev/seq":"3"}},"spec":{"version":"` + strings.Repeat("p", 900) + `"}}}` +
		// a second frame on the same line, as a server that coalesces may send
		`{"type":"DELETED","object":{"kind":"Database","metadata":{"name":"b","resourceVersion":"13","labels":{"load.apiloom.dev/seq":"bad"}}}}
`
	var got []watchEvent
	err := readEvents(strings.NewReader(stream), func(ev *watchEvent) { got = append(got, *ev) })
	if !errors.Is(err, io.EOF) {
		t.Fatalf("end of stream: %v, want io.EOF", err)
	}
	if len(got) != 3 {
		t.Fatalf("got %d events, want 3 (bookmark skipped): %+v", len(got), got)
	}
	if got[0].marker != "tok" || got[0].seq != -1 || got[0].rv != 10 {
		t.Errorf("marker event: %+v", got[0])
	}
	if got[1].seq != 3 || got[1].rv != 12 || got[1].name != "a" {
		t.Errorf("write event: %+v", got[1])
	}
	if got[2].seq != -1 || got[2].rv != 13 {
		t.Errorf("bad seq label must count as untracked: %+v", got[2])
	}
}

func TestReadEventsError(t *testing.T) {
	stream := `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}}`
	err := readEvents(strings.NewReader(stream), func(*watchEvent) { t.Fatal("an ERROR is not an event") })
	if !errors.Is(err, errWatchError) || !strings.Contains(err.Error(), "410 Expired") {
		t.Fatalf("err = %v", err)
	}
}

type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestReadEventsBrokenStream(t *testing.T) {
	broken := errors.New("connection reset")
	r := &failingReader{data: []byte(`{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"1"}}}` + "\n" + `{"type":"MODIFIED","obj`), err: broken}
	n := 0
	err := readEvents(r, func(*watchEvent) { n++ })
	if !errors.Is(err, broken) || n != 1 {
		t.Fatalf("err = %v after %d events, want the read error after 1", err, n)
	}
}

func TestReadEventsMalformed(t *testing.T) {
	for name, stream := range map[string]string{
		"not JSON":  `{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"1"}}}` + "\n" + `xyz`,
		"truncated": `{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"1"}}}` + "\n" + `{"type":"MODIFIED","obj`,
	} {
		n := 0
		err := readEvents(strings.NewReader(stream), func(*watchEvent) { n++ })
		if err == nil || errors.Is(err, io.EOF) || n != 1 {
			t.Errorf("%s: err = %v after %d events, want a decoding error after 1", name, err, n)
		}
	}
}
