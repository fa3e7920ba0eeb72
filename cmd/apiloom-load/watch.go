package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"time"

	jsoniter "github.com/json-iterator/go"
)

var jsonAPI = jsoniter.ConfigCompatibleWithStandardLibrary

// wireEvent is the part of a watch event the load generator reads; the
// rest of the object (the payload) is skipped by the decoder.
type wireEvent struct {
	Type   string `json:"type"`
	Object struct {
		Metadata struct {
			Name            string            `json:"name"`
			ResourceVersion string            `json:"resourceVersion"`
			Labels          map[string]string `json:"labels"`
		} `json:"metadata"`
		// Set on an ERROR event, whose object is a Status.
		Code    int    `json:"code"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
	} `json:"object"`
}

// watchEvent is what a watch stream hands its consumer.
type watchEvent struct {
	name   string
	rv     uint64 // 0 if not a decimal
	seq    int    // the write sequence number, -1 for none
	marker string // the marker token, "" for none
	at     time.Time
}

// errWatchError is a watch stream that ended with an ERROR event.
var errWatchError = errors.New("apiloom-load: watch ERROR event")

// errWatchStatus is a watch request answered with something other than 200.
var errWatchStatus = errors.New("apiloom-load: watch not accepted")

// watchRequest opens one watch from rv on client and returns the response
// whose body streams events; onConn is told the local address of the
// connection the request went out on.
func watchRequest(ctx context.Context, client *http.Client, collection, rv string, timeout time.Duration, onConn func(string)) (*http.Response, error) {
	q := url.Values{}
	q.Set("watch", "true")
	q.Set("resourceVersion", rv)
	q.Set("timeoutSeconds", strconv.Itoa(int(timeout.Seconds())))
	if onConn != nil {
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) { onConn(info.Conn.LocalAddr().String()) },
		})
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, collection+"?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		_ = resp.Body.Close()
		return nil, fmt.Errorf("%w: HTTP %d: %s", errWatchStatus, resp.StatusCode, body)
	}
	return resp, nil
}

// readEvents decodes the stream in body until it ends or fails, calling
// handle for each ADDED, MODIFIED or DELETED event; BOOKMARKs are skipped.
// It returns io.EOF when the server ended the stream cleanly and
// errWatchError for an ERROR event. It never closes body.
func readEvents(body io.Reader, handle func(*watchEvent)) error {
	src := &errRecorder{r: body}
	// The iterator reads through a buffer larger than a frame: a string
	// that straddles the buffer's end (the ~1 KiB payload, with jsoniter's
	// default 512 bytes) is read byte by byte, which cost the load
	// generator a third of its CPU in fan-out runs.
	iter := jsoniter.Parse(jsonAPI, src, 64<<10)
	var ev watchEvent
	for {
		// WhatIsNext skips the whitespace between frames and tells a clean
		// end (io.EOF) from a failed read, which errRecorder keeps.
		if iter.WhatIsNext() == jsoniter.InvalidValue {
			switch {
			case src.err != nil:
				return src.err
			case iter.Error == nil:
				return errors.New("apiloom-load: watch stream is not JSON")
			case errors.Is(iter.Error, io.EOF):
				return io.EOF
			}
			return iter.Error
		}
		var w wireEvent
		if iter.ReadVal(&w); iter.Error != nil {
			if src.err != nil {
				return src.err
			}
			return iter.Error
		}
		switch w.Type {
		case "BOOKMARK":
			continue
		case "ERROR":
			return fmt.Errorf("%w: %d %s: %s", errWatchError, w.Object.Code, w.Object.Reason, w.Object.Message)
		}
		ev = watchEvent{name: w.Object.Metadata.Name, seq: -1, at: time.Now()}
		ev.rv, _ = strconv.ParseUint(w.Object.Metadata.ResourceVersion, 10, 64)
		if s, ok := w.Object.Metadata.Labels[labelSeq]; ok {
			if n, err := strconv.Atoi(s); err == nil && n >= 0 {
				ev.seq = n
			}
		}
		ev.marker = w.Object.Metadata.Labels[labelMarker]
		handle(&ev)
	}
}

// errRecorder remembers the first error other than io.EOF its reader
// returned.
type errRecorder struct {
	r   io.Reader
	err error
}

func (e *errRecorder) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && e.err == nil {
		e.err = err
	}
	return n, err
}
