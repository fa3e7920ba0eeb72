package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/generated/clientset/versioned/scheme"
)

var (
	databasesV1 = schema.GroupVersionResource{Group: "example.apiloom.dev", Version: "v1", Resource: "databases"}
	widgets     = schema.GroupVersionResource{Group: "bench.example.com", Version: "v1", Resource: "widgets"}
)

// TestProtobufConfig: the protobuf client sets exactly what
// kube-controller-manager's clients set, on a copy.
func TestProtobufConfig(t *testing.T) {
	in := &rest.Config{Host: "https://127.0.0.1:1", ContentConfig: rest.ContentConfig{ContentType: "application/json"}}
	out := protobufConfig(in)
	if out.ContentType != "application/vnd.kubernetes.protobuf" ||
		out.AcceptContentTypes != "application/vnd.kubernetes.protobuf,application/json" {
		t.Errorf("content types %q, accept %q", out.ContentType, out.AcceptContentTypes)
	}
	if in.ContentType != "application/json" || in.AcceptContentTypes != "" {
		t.Error("protobufConfig changed its argument")
	}
}

// TestProtobufInformerChoice: only the kinds the generated clientset has
// get a protobuf informer; the peer's CRD does not.
func TestProtobufInformerChoice(t *testing.T) {
	if _, ok := protobufInformer(databasesV1); !ok {
		t.Error("no protobuf informer for apiloom's default resource")
	}
	if _, ok := protobufInformer(widgets); ok {
		t.Error("a protobuf informer for a resource without Go types")
	}
	if g := informerGates(formatProtobuf, true); g["ClientsAllowCBOR"] || g["ClientsPreferCBOR"] || !g["WatchListClient"] {
		t.Errorf("protobuf watch-list gates %v", g)
	}
}

// TestProbeProtobuf: a server that answers the protobuf Accept header in
// JSON does not serve the format (kube-apiserver's CRDs); one that
// answers in protobuf serves what the tool cannot decode, and a failed
// request is a failure, neither of them "not served".
func TestProbeProtobuf(t *testing.T) {
	for _, tc := range []struct {
		media     string
		status    int
		notServed bool
		want      string
	}{
		{"application/json", 200, true, "asked for protobuf, the server sent 1 LIST answered in application/json"},
		{protobufMedia, 200, false, "has Go types only for"},
		{"application/json", 403, false, "LIST answered 403"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if got := r.Header.Get("Accept"); got != protobufAcceptHeader || r.URL.Query().Get("limit") != "1" {
				t.Errorf("probe sent Accept %q, query %q", got, r.URL.RawQuery)
			}
			w.Header().Set("Content-Type", tc.media)
			w.WriteHeader(tc.status)
		}))
		err := probeProtobuf(t.Context(), srv.Client(), srv.URL+"/apis/bench.example.com/v1/namespaces/bench/widgets", widgets)
		srv.Close()
		switch {
		case err == nil || !strings.Contains(err.Error(), tc.want):
			t.Errorf("%s %d: %v, want %q", tc.media, tc.status, err, tc.want)
		case errors.Is(err, errFormatNotServed) != tc.notServed:
			t.Errorf("%s %d: %v: not served %v, want %v", tc.media, tc.status, err, !tc.notServed, tc.notServed)
		case !tc.notServed && !errors.Is(err, errInformer):
			t.Errorf("%s %d: %v is not errInformer", tc.media, tc.status, err)
		}
	}
}

// fakeDatabases is a server of n Databases in namespace bench answering
// every request in media (protobuf or JSON), whatever was asked: a LIST,
// and a watch that sends the initial events and their bookmark when asked
// for (watch-list), then stays open.
func fakeDatabases(t *testing.T, n int, media string) *httptest.Server {
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), media)
	if !ok || info.StreamSerializer == nil {
		t.Fatalf("no serializer for %s", media)
	}
	enc := scheme.Codecs.EncoderForVersion(info.Serializer, examplev1.SchemeGroupVersion)
	const rv = "42"
	db := func(i int) *examplev1.Database {
		return &examplev1.Database{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("db-%d", i), Namespace: "bench", ResourceVersion: rv},
			Spec: examplev1.DatabaseSpec{Engine: "postgres"}}
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Accept"); got != protobufAcceptHeader {
			t.Errorf("%s: Accept %q", r.URL, got)
		}
		q := r.URL.Query()
		if q.Get("watch") != "true" {
			list := &examplev1.DatabaseList{ListMeta: metav1.ListMeta{ResourceVersion: rv}}
			for i := range n {
				list.Items = append(list.Items, *db(i))
			}
			w.Header().Set("Content-Type", media)
			if err := enc.Encode(list, w); err != nil {
				t.Error(err)
			}
			return
		}
		w.Header().Set("Content-Type", media+";stream=watch")
		fw := info.StreamSerializer.Framer.NewFrameWriter(w)
		send := func(typ string, obj runtime.Object) {
			raw, err := runtime.Encode(enc, obj)
			if err == nil {
				err = info.StreamSerializer.Serializer.Encode(&metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: raw}}, fw)
			}
			if err != nil {
				t.Error(err)
			}
		}
		if q.Get("sendInitialEvents") == "true" {
			for i := range n {
				send("ADDED", db(i))
			}
			end := &examplev1.Database{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv,
				Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
			send("BOOKMARK", end)
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
}

// TestSyncOnceProtobuf: the protobuf round's informer (the generated
// clientset's, in protobuf) syncs every object, with watch-list off and
// on, and its recorder accepts the round as protobuf; the same informer
// answered in JSON is "not served".
func TestSyncOnceProtobuf(t *testing.T) {
	g := installClientGates()
	build, ok := protobufInformer(databasesV1)
	if !ok {
		t.Fatal("no protobuf informer for databases")
	}
	for _, media := range []string{protobufMedia, "application/json"} {
		for _, watchList := range []bool{false, true} {
			name := fmt.Sprintf("%s watch-list=%v", media, watchList)
			srv := fakeDatabases(t, 7, media)
			tg := &target{cfg: &rest.Config{Host: srv.URL, QPS: -1}, gvr: databasesV1, namespace: "bench"}
			rec := newRequestRecorder()
			restore := g.set(informerGates(formatProtobuf, watchList))
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			_, items, err := syncOnce(ctx, tg, rec, build)
			cancel()
			restore()
			srv.Close()
			if err != nil || items != 7 {
				t.Errorf("%s: %d items, %v", name, items, err)
				continue
			}
			err = rec.check(formatProtobuf, watchList)
			if media == protobufMedia && err != nil {
				t.Errorf("%s: %v", name, err)
			}
			if media != protobufMedia && !errors.Is(err, errFormatNotServed) {
				t.Errorf("%s: %v, want not served", name, err)
			}
		}
	}
}
