package fakeclient

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/generated/clientset/versioned/fake"
)

// TestStreamExpansion: the Logs method apiserver-gen writes for the
// Database's +apiloom:stream requests .../databases/NAME/logs with the
// options as query parameters, and the fake records the call and answers
// "fake logs" or what a reactor returns.
func TestStreamExpansion(t *testing.T) {
	ctx := t.Context()
	tail := int64(5)
	opts := &examplev1.DatabaseLogOptions{Follow: true, TailLines: &tail}

	cs := fake.NewClientset()
	body, err := cs.ExampleV1().Databases("shop").Logs("orders", opts).DoRaw(ctx)
	if err != nil || string(body) != "fake logs" {
		t.Fatalf("fake Logs = %q, %v", body, err)
	}
	actions := cs.Actions()
	if len(actions) != 1 || actions[0].GetVerb() != "get" || actions[0].GetSubresource() != "logs" || actions[0].GetNamespace() != "shop" {
		t.Fatalf("actions = %+v", actions)
	}
	cs.PrependReactor("get", "databases", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, &runtime.Unknown{Raw: []byte("line 1\n")}, nil
	})
	rc, err := cs.ExampleV1().Databases("shop").Logs("orders", opts).Stream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || string(got) != "line 1\n" {
		t.Fatalf("reactor's logs = %q, %v", got, err)
	}

	// The real client's request.
	var gotURL string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotURL = r.URL.String()
		_, _ = io.WriteString(w, "a line\n")
	}))
	defer srv.Close()
	real, err := versioned.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	body, err = real.ExampleV1().Databases("shop").Logs("orders", opts).DoRaw(ctx)
	if err != nil || string(body) != "a line\n" {
		t.Fatalf("Logs = %q, %v", body, err)
	}
	if want := "/apis/example.apiloom.dev/v1/namespaces/shop/databases/orders/logs?follow=true&tailLines=5"; gotURL != want {
		t.Fatalf("requested %s, want %s", gotURL, want)
	}
}
