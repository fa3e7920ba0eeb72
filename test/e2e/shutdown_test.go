package e2e

import (
	"context"
	"log/slog"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/apiloom/apiloom/generated/apiserver"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
	serverpkg "github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/registry"
)

// TestGracefulShutdownEndsWatches checks that stopping the server ends
// open watch streams cleanly (the client sees its channel close rather
// than hanging) and that Run returns well before the shutdown timeout.
func TestGracefulShutdownEndsWatches(t *testing.T) {
	reg := &registry.Registry{}
	apiserver.Install(reg)
	o := serverpkg.DefaultOptions()
	o.DataDir, o.SecurePort, o.ShutdownTimeout = t.TempDir(), 0, time.Minute
	o.HTTP2Server = http2Server(t)
	srv, err := serverpkg.New(o, reg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	select {
	case <-srv.Ready():
	case err := <-done:
		t.Fatalf("server ended before serving: %v", err)
	}
	cs := versioned.NewForConfigOrDie(&rest.Config{
		Host: "https://" + srv.Address(), BearerToken: srv.Token(),
		TLSClientConfig: rest.TLSClientConfig{CAData: srv.CAPEM()},
	})
	w, err := cs.ExampleV1().Databases("").Watch(t.Context(), metav1.ListOptions{TimeoutSeconds: new(int64(600))})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	stop()
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		for range w.ResultChan() { // drain until the server ends the stream
		}
	}()
	// Both must happen long before the one-minute shutdown timeout, which
	// a watch that is not ended would run into.
	deadline := time.After(20 * time.Second)
	select {
	case <-closed:
	case <-deadline:
		t.Fatal("watch still open after shutdown began")
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-deadline:
		t.Fatal("Run did not return after shutdown began")
	}
}
