package main

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientfeatures "k8s.io/client-go/features"
)

// fixedGates answers from a map; absent features are off.
type fixedGates map[clientfeatures.Feature]bool

func (f fixedGates) Enabled(k clientfeatures.Feature) bool { return f[k] }

// TestClientGatesSetRestore: a round's overrides win over the base, and
// restoring brings back exactly what was in force before, nested too.
func TestClientGatesSetRestore(t *testing.T) {
	g := &clientGates{base: fixedGates{clientfeatures.WatchListClient: true}}
	if !g.Enabled(clientfeatures.WatchListClient) || g.Enabled(clientfeatures.ClientsAllowCBOR) {
		t.Fatal("without overrides the base must answer")
	}
	restore := g.set(informerGates(formatCBOR, false))
	if g.Enabled(clientfeatures.WatchListClient) || !g.Enabled(clientfeatures.ClientsAllowCBOR) || !g.Enabled(clientfeatures.ClientsPreferCBOR) {
		t.Fatal("cbor list+watch round: want watch-list off, CBOR allowed and preferred")
	}
	inner := g.set(informerGates(formatJSON, true))
	if !g.Enabled(clientfeatures.WatchListClient) || g.Enabled(clientfeatures.ClientsAllowCBOR) || g.Enabled(clientfeatures.ClientsPreferCBOR) {
		t.Fatal("json watch-list round: want watch-list on, CBOR off")
	}
	inner()
	if g.Enabled(clientfeatures.WatchListClient) || !g.Enabled(clientfeatures.ClientsPreferCBOR) {
		t.Fatal("inner restore did not bring back the outer round's gates")
	}
	restore()
	if !g.Enabled(clientfeatures.WatchListClient) || g.Enabled(clientfeatures.ClientsAllowCBOR) {
		t.Fatal("restore did not bring back the base")
	}
}

// TestInstallClientGates: client-go asks our gates once installed.
func TestInstallClientGates(t *testing.T) {
	g := installClientGates()
	restore := g.set(map[clientfeatures.Feature]bool{clientfeatures.ClientsAllowCBOR: true})
	defer restore()
	if !clientfeatures.FeatureGates().Enabled(clientfeatures.ClientsAllowCBOR) {
		t.Fatal("client-go's FeatureGates() does not see the override")
	}
}

func TestRequestKind(t *testing.T) {
	for q, want := range map[string]string{
		"":                               requestList,
		"?limit=500&resourceVersion=0":   requestList,
		"?watch=true&resourceVersion=12": requestWatch,
		"?watch=1":                       requestWatch,
		"?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan": requestWatchList,
	} {
		req := httptest.NewRequest(http.MethodGet, "https://127.0.0.1/apis/g/v1/namespaces/n/r"+q, nil)
		if got := requestKind(req); got != want {
			t.Errorf("%q: %s, want %s", q, got, want)
		}
	}
}

// TestRecorderThroughTransport: the wrapper counts requests and records
// the media type of each answer, parameters dropped.
func TestRecorderThroughTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") == "true" {
			w.Header().Set("Content-Type", "application/cbor-seq")
		} else {
			w.Header().Set("Content-Type", "application/cbor; charset=x")
		}
	}))
	defer srv.Close()
	rec := newRequestRecorder()
	c := &http.Client{Transport: rec.wrap(http.DefaultTransport)}
	for _, q := range []string{"", "?watch=true&sendInitialEvents=true"} {
		resp, err := c.Get(srv.URL + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	reqs, answers := rec.summary()
	if reqs[requestList] != 1 || reqs[requestWatchList] != 1 {
		t.Errorf("requests %v", reqs)
	}
	if strings.Join(answers, "|") != "LIST 200 application/cbor|WATCHLIST 200 application/cbor-seq" {
		t.Errorf("answers %v", answers)
	}
	if err := rec.check(formatCBOR, false); err != nil {
		t.Errorf("cbor answers judged for cbor: %v", err)
	}
	if err := rec.check(formatJSON, false); err == nil {
		t.Error("cbor answers accepted for a json round")
	}
}

// TestRecorderCheck: a round is only accepted when client-go did what the
// round claims to measure.
func TestRecorderCheck(t *testing.T) {
	type answer struct{ kind, status, media string }
	for _, tc := range []struct {
		name      string
		format    string
		watchList bool
		answers   []answer
		wantErr   string // "" for none
	}{
		{"json list+watch", formatJSON, false, []answer{{requestList, "200", "application/json"}, {requestWatch, "200", "application/json"}}, ""},
		{"json watch-list", formatJSON, true, []answer{{requestWatchList, "200", "application/json"}}, ""},
		{"cbor watch-list", formatCBOR, true, []answer{{requestWatchList, "200", "application/cbor-seq"}}, ""},
		{"cbor answered in json", formatCBOR, false, []answer{{requestList, "200", "application/json"}}, "asked for cbor, the server sent 1 LIST answered in application/json"},
		{"watch-list fell back", formatJSON, true, []answer{{requestWatchList, "406", "application/json"}, {requestList, "200", "application/json"}},
			"fell back from watch-list to 1 LIST(s); failed requests: 1× WATCHLIST 406 application/json"},
		{"no watch-list", formatJSON, true, []answer{{requestList, "200", "application/json"}}, "made no watch-list request"},
		{"no list", formatJSON, false, []answer{{requestWatch, "200", "application/json"}}, "made no LIST"},
		{"cancelled by the round", formatJSON, false, []answer{{requestList, "200", "application/json"}, {requestWatch, "", ""}}, ""},
	} {
		rec := newRequestRecorder()
		for _, a := range tc.answers {
			rec.record(a.kind, a.status, a.media)
		}
		err := rec.check(tc.format, tc.watchList)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.wantErr)
		case err != nil && errors.Is(err, errFormatNotServed) != (tc.name == "cbor answered in json"):
			// Only a format the server does not serve is not a failure.
			t.Errorf("%s: %v: errFormatNotServed %v", tc.name, err, errors.Is(err, errFormatNotServed))
		case err != nil && !errors.Is(err, errFormatNotServed) && !errors.Is(err, errInformer):
			t.Errorf("%s: %v is not errInformer", tc.name, err)
		}
	}
}

// TestInformerRowsAndCompare: the summary has a line per round, a failed
// round says so, and compare puts each setting's figures in a row with
// the ratio to the first run, leaving failed rounds without a figure.
func TestInformerRowsAndCompare(t *testing.T) {
	a := &result{Label: "apiloom", Informer: &informerResult{Repeats: 3, Rounds: []informerRound{
		{Objects: 100, Items: 100, Format: formatJSON, Median: 200 * time.Millisecond, All: []time.Duration{1, 2, 3}, CPU: cpuSpan{Total: 300 * time.Millisecond}, PeakRSSKiB: 2048},
		{Objects: 100, Items: 100, Format: formatJSON, WatchList: true, Median: 100 * time.Millisecond, All: []time.Duration{1, 2, 3}},
		{Objects: 100, Format: formatCBOR, Error: "asked for cbor"},
		{Objects: 100, Items: 100, Format: formatProtobuf, Median: 50 * time.Millisecond, All: []time.Duration{1}},
	}}}
	b := &result{Label: "kube", Informer: &informerResult{Repeats: 3, Rounds: []informerRound{
		{Objects: 100, Items: 100, Format: formatJSON, Median: 500 * time.Millisecond, All: []time.Duration{1, 2, 3}, CPU: cpuSpan{Total: 1500 * time.Millisecond}, PeakRSSKiB: 8192},
		{Objects: 100, Items: 100, Format: formatCBOR, Median: 400 * time.Millisecond, All: []time.Duration{1}},
		{Objects: 100, Format: formatProtobuf, Error: "asked for protobuf, the server sent 1 LIST answered in application/json", NotServed: true},
	}}}
	rows := informerRows(a.Informer)
	if len(rows) != 5 || !strings.Contains(rows[1][1], "200.0ms") || !strings.Contains(rows[1][1], "0.10s/sync") || rows[3][1] != "failed (see FAILED below)" ||
		!strings.Contains(rows[4][1], "50.0ms") {
		t.Errorf("rows %q", rows)
	}
	dir := t.TempDir()
	pa, pb := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	if err := a.write(pa); err != nil {
		t.Fatal(err)
	}
	if err := b.write(pb); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := runCompare(&out, []string{pa, pb}); err != nil {
		t.Fatal(err)
	}
	for row, want := range map[string]string{
		"informer 100 json list+watch sync ms":             "200.0 500.0 2.50",
		"informer 100 json list+watch server CPU ms/sync":  "100 500 5.00",
		"informer 100 json list+watch server peak RSS MiB": "2.0 8.0 4.00",
		"informer 100 json watch-list sync ms":             "100.0 - -",
		"informer 100 cbor list+watch sync ms":             "- 400.0 -",
		"informer 100 protobuf list+watch sync ms":         "50.0 - -",
	} {
		got := ""
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), row+" ") {
				got = strings.Join(strings.Fields(strings.TrimPrefix(strings.TrimSpace(l), row)), " ")
			}
		}
		if got != want {
			t.Errorf("row %q = %q, want %q\n%s", row, got, want, out.String())
		}
	}
}
