package e2e

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	crdconfv1 "github.com/apiloom/apiloom/apis/crdconf/v1"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
)

// TestFieldsNamedLikeProtobufMethods: Parcel (apis/crdconf/v1), whose spec
// has fields named Size and String, is valid as a CRD; make generate
// leaves it out of protobuf, and it is served as its CRD is by
// kube-apiserver: created, read and listed in JSON and in CBOR with its
// fields intact; a client asking for protobuf only gets 406, one that
// accepts JSON too (client-go's protobuf clients) gets JSON, a protobuf
// body is 415, and the metadata client's protobuf views work, as for any
// kind.
func TestFieldsNamedLikeProtobufMethods(t *testing.T) {
	ts, _ := startServer(t)
	ts.CreateNamespaces(t, "shop")
	ctx := t.Context()
	newParcel := func(name string, size int32) *crdconfv1.Parcel {
		return &crdconfv1.Parcel{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       crdconfv1.ParcelSpec{Size: ptr.To(size), String: "fragile " + name},
		}
	}
	check := func(t *testing.T, cs versioned.Interface, log *mediaLog, name string, size int32, media string) {
		t.Helper()
		parcels := cs.CrdconfV1().Parcels("shop")
		created, err := parcels.Create(ctx, newParcel(name, size), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		got, err := parcels.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		if got.Spec.Size == nil || *got.Spec.Size != size || got.Spec.String != "fragile "+name || got.ResourceVersion != created.ResourceVersion {
			t.Fatalf("got %+v (rv %s), want size %d, string %q (rv %s)", got.Spec, got.ResourceVersion, size, "fragile "+name, created.ResourceVersion)
		}
		list, err := parcels.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		found := false
		for _, p := range list.Items {
			found = found || (p.Name == name && p.Spec.Size != nil && *p.Spec.Size == size && p.Spec.String == "fragile "+name)
		}
		if !found {
			t.Fatalf("list lacks %s: %+v", name, list.Items)
		}
		for _, want := range [][3]string{{"POST", media, media}, {"GET", "", media}} {
			if !log.has(want[0], want[1], want[2]) {
				t.Errorf("no %s sending %q answered in %q:\n%s", want[0], want[1], want[2], log)
			}
		}
	}

	t.Run("json", func(t *testing.T) {
		log := &mediaLog{}
		cfg := cborConfig(ts, log)
		cfg.ContentType = "application/json"
		check(t, versioned.NewForConfigOrDie(cfg), log, "by-json", 250, "application/json")
	})
	t.Run("cbor", func(t *testing.T) {
		useCBORClients(t)
		log := &mediaLog{}
		check(t, versioned.NewForConfigOrDie(cborConfig(ts, log)), log, "by-cbor", 500, "application/cbor")
	})

	t.Run("protobuf", func(t *testing.T) {
		c, err := rest.HTTPClientFor(ts.Config)
		if err != nil {
			t.Fatal(err)
		}
		url := ts.Config.Host + "/apis/crdconf.apiloom.dev/v1/namespaces/shop/parcels"
		do := func(method, path, accept, contentType string, body []byte) (*http.Response, []byte) {
			t.Helper()
			req, err := http.NewRequestWithContext(ctx, method, url+path, bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Accept", accept)
			if contentType != "" {
				req.Header.Set("Content-Type", contentType)
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			data, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			return resp, data
		}
		// A Status in JSON, or in protobuf for a client accepting it.
		status := func(t *testing.T, data []byte) metav1.Status {
			t.Helper()
			obj, _, err := kscheme.Codecs.UniversalDeserializer().Decode(data, nil, nil)
			s, ok := obj.(*metav1.Status)
			if err != nil || !ok {
				t.Fatalf("not a Status (%v): %q", err, data)
			}
			return *s
		}

		// Protobuf only: 406, naming the formats the kind has.
		for _, path := range []string{"/by-json", "", "?watch=true"} {
			resp, data := do("GET", path, protobufMedia, "", nil)
			s := status(t, data)
			if resp.StatusCode != http.StatusNotAcceptable || s.Reason != metav1.StatusReasonNotAcceptable ||
				strings.Contains(s.Message, "protobuf") || !strings.Contains(s.Message, "application/json") {
				t.Errorf("GET %q accepting protobuf only: %d %+v, want 406 NotAcceptable listing the other formats", path, resp.StatusCode, s)
			}
		}
		// Protobuf or JSON, as client-go's protobuf clients ask: JSON.
		resp, data := do("GET", "/by-json", protobufMedia+", application/json", "", nil)
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "application/json" || !bytes.Contains(data, []byte(`"size":250`)) {
			t.Errorf("GET accepting protobuf and JSON: %d %q %s", resp.StatusCode, ct, data)
		}
		// A protobuf body: 415.
		resp, data = do("POST", "", "application/json", protobufMedia, []byte("k8s\x00"))
		if s := status(t, data); resp.StatusCode != http.StatusUnsupportedMediaType || s.Reason != metav1.StatusReasonUnsupportedMediaType || strings.Contains(s.Message, "protobuf") {
			t.Errorf("POST in protobuf: %d %+v, want 415 UnsupportedMediaType", resp.StatusCode, s)
		}

		// The generated clientset configured for protobuf (accepting JSON
		// too) reads the kind in JSON.
		log := &mediaLog{}
		pcs := versioned.NewForConfigOrDie(protobufConfig(ts, log))
		if got, err := pcs.CrdconfV1().Parcels("shop").Get(ctx, "by-cbor", metav1.GetOptions{}); err != nil || *got.Spec.Size != 500 {
			t.Errorf("get with a protobuf client: %v, %+v", err, got)
		}
		if _, err := pcs.CrdconfV1().Parcels("shop").List(ctx, metav1.ListOptions{}); err != nil {
			t.Errorf("list with a protobuf client: %v", err)
		}
		if !log.has("GET", "", "application/json") || log.has("GET", "", protobufMedia) {
			t.Errorf("a protobuf client's reads of a kind without protobuf are not JSON:\n%s", log)
		}

		// Metadata views are protobuf for every kind, as kube-apiserver
		// serves them for CRDs (the garbage collector's metadata informers).
		mlog := &mediaLog{}
		mc := metadata.NewForConfigOrDie(protobufConfig(ts, mlog))
		gvr := schema.GroupVersionResource{Group: "crdconf.apiloom.dev", Version: "v1", Resource: "parcels"}
		list, err := mc.Resource(gvr).Namespace("shop").List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) != 2 {
			t.Fatalf("metadata list: %v, %+v", err, list)
		}
		if !mlog.has("GET", "", protobufMedia) {
			t.Errorf("the metadata list was not protobuf:\n%s", mlog)
		}
	})
}
