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

// readEvents reads the stream in body until it ends or fails, calling
// handle for each ADDED, MODIFIED or DELETED event; BOOKMARKs are skipped.
// It returns io.EOF when the server ended the stream cleanly and
// errWatchError for an ERROR event. It never closes body.
func readEvents(body io.Reader, handle func(*watchEvent)) error {
	s := newEventScanner(body)
	var ev watchEvent
	for {
		w, err := s.next()
		if err != nil {
			return err
		}
		switch w.typ {
		case "BOOKMARK":
			continue
		case "ERROR":
			return fmt.Errorf("%w: %d %s: %s", errWatchError, w.code, w.reason, w.message)
		}
		ev = watchEvent{name: w.name, seq: -1, marker: w.marker, at: time.Now()}
		ev.rv, _ = strconv.ParseUint(w.rv, 10, 64)
		if w.hasSeq {
			if n, err := strconv.Atoi(w.seq); err == nil && n >= 0 {
				ev.seq = n
			}
		}
		handle(&ev)
	}
}
