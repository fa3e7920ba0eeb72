package main

import (
	"fmt"
	"mime"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Kinds of request an informer makes.
const (
	requestList      = "LIST"
	requestWatch     = "WATCH"
	requestWatchList = "WATCHLIST"
)

// requestRecorder wraps client-go's transport to see what an informer
// really asked for and got: whether watch-list was used or client-go fell
// back to a LIST, and in which media type the server answered. Without it
// a round could report figures for what it did not measure: a server
// without CBOR answers a CBOR-preferring client (Accept
// "application/json;q=0.9,application/cbor;q=1") in JSON.
type requestRecorder struct {
	// mu guards everything below.
	mu sync.Mutex
	// requests counts by kind; answers counts "KIND STATUS MEDIATYPE".
	requests map[string]int
	answers  map[string]int
}

func newRequestRecorder() *requestRecorder {
	return &requestRecorder{requests: map[string]int{}, answers: map[string]int{}}
}

// wrap is a transport.WrapperFunc.
func (r *requestRecorder) wrap(rt http.RoundTripper) http.RoundTripper {
	return recordingRoundTripper{rt: rt, rec: r}
}

type recordingRoundTripper struct {
	rt  http.RoundTripper
	rec *requestRecorder
}

func (rt recordingRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	kind := requestKind(req)
	resp, err := rt.rt.RoundTrip(req)
	if err != nil && req.Context().Err() != nil {
		// Ended by the round itself (the informer stopped after its
		// sync while a watch was being opened): no answer to judge.
		rt.rec.record(kind, "", "")
		return resp, err
	}
	status, media := "error", ""
	if err == nil {
		status = fmt.Sprint(resp.StatusCode)
		media, _, _ = mime.ParseMediaType(resp.Header.Get("Content-Type"))
	}
	rt.rec.record(kind, status, media)
	return resp, err
}

// WrappedRoundTripper lets client-go find the transport underneath (to
// close its idle connections).
func (rt recordingRoundTripper) WrappedRoundTripper() http.RoundTripper { return rt.rt }

// requestKind classifies a GET of the collection as client-go's reflector
// makes it.
func requestKind(req *http.Request) string {
	q := req.URL.Query()
	switch {
	case q.Get("watch") == "true" || q.Get("watch") == "1":
		if q.Get("sendInitialEvents") == "true" {
			return requestWatchList
		}
		return requestWatch
	default:
		return requestList
	}
}

func (r *requestRecorder) record(kind, status, media string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests[kind]++
	if status != "" {
		r.answers[strings.TrimSpace(kind+" "+status+" "+media)]++
	}
}

// summary returns the requests by kind and the distinct answers.
func (r *requestRecorder) summary() (map[string]int, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	answers := make([]string, 0, len(r.answers))
	for a := range r.answers {
		answers = append(answers, a)
	}
	sort.Strings(answers)
	requests := make(map[string]int, len(r.requests))
	for k, v := range r.requests {
		requests[k] = v
	}
	return requests, answers
}

// acceptedMedia are the media types a format's successful answers must
// have: a round in which the server answered otherwise did not measure
// that format.
var acceptedMedia = map[string][]string{
	formatJSON: {"application/json"},
	formatCBOR: {"application/cbor", "application/cbor-seq"},
	// Watches come as protobufMedia;stream=watch, whose parameter the
	// recorder drops.
	formatProtobuf: {protobufMedia},
}

// check reports why the recorded requests do not show an informer that
// used the format and mode asked for: a watch-list round that fell back
// to a LIST, a list+watch round that made no LIST, an answer in another
// media type. nil when they do.
func (r *requestRecorder) check(format string, watchList bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var problems []string
	switch {
	case watchList && r.requests[requestWatchList] == 0:
		problems = append(problems, "client-go made no watch-list request")
	case watchList && r.requests[requestList] > 0:
		problems = append(problems, fmt.Sprintf("client-go fell back from watch-list to %d LIST(s)", r.requests[requestList]))
	case !watchList && r.requests[requestList] == 0:
		problems = append(problems, "client-go made no LIST")
	}
	var wrongMedia []string
	for a, n := range r.answers {
		f := strings.Fields(a)
		if len(f) == 3 && f[1] == "200" && !slices.Contains(acceptedMedia[format], f[2]) {
			wrongMedia = append(wrongMedia, fmt.Sprintf("%d %s answered in %s", n, f[0], f[2]))
		}
	}
	if len(wrongMedia) > 0 {
		sort.Strings(wrongMedia)
		problems = append(problems, fmt.Sprintf("asked for %s, the server sent %s", format, strings.Join(wrongMedia, ", ")))
	}
	var failed []string
	for a, n := range r.answers {
		if f := strings.Fields(a); len(f) >= 2 && f[1] != "200" {
			failed = append(failed, fmt.Sprintf("%d× %s", n, a))
		}
	}
	if len(failed) > 0 {
		sort.Strings(failed)
		problems = append(problems, "failed requests: "+strings.Join(failed, ", "))
	}
	switch {
	case len(problems) == 0:
		return nil
	case len(problems) == 1 && len(wrongMedia) > 0:
		// The server does not serve the format (kube-apiserver serves a
		// CRD in JSON): a fact to report, not a misbehaviour.
		return fmt.Errorf("%w: %s", errFormatNotServed, problems[0])
	}
	return fmt.Errorf("%w: %s", errInformer, strings.Join(problems, "; "))
}
