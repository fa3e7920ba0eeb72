package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/server/testserver"
)

// errorLog records the status code and Content-Type of every failed
// exchange of a client.
type errorLog struct {
	mu  sync.Mutex
	log []string // "404 application/vnd.kubernetes.protobuf"
}

func (l *errorLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		if err == nil && resp.StatusCode >= 400 {
			l.mu.Lock()
			l.log = append(l.log, fmt.Sprintf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type")))
			l.mu.Unlock()
		}
		return resp, err
	})
}

// last is the latest failed exchange, "" if none.
func (l *errorLog) last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.log) == 0 {
		return ""
	}
	return l.log[len(l.log)-1]
}

// errorsConfig is ts's client config with contentType, recording failures.
func errorsConfig(ts *testserver.TestServer, contentType string, log *errorLog) *rest.Config {
	cfg := rest.CopyConfig(ts.Config)
	cfg.ContentType = contentType
	cfg.Wrap(log.wrap)
	return cfg
}

// TestErrorsInTheClientsFormat: errors reach client-go in the format it
// asked for, as from kube-apiserver, and decode to the Status the server
// meant (message, details, causes), not to client-go's generic error for a
// body it cannot read: the kubernetes clientset in protobuf and in JSON
// (ConfigMaps), the generated clientset in CBOR (Databases).
func TestErrorsInTheClientsFormat(t *testing.T) {
	ts, _ := startServer(t)
	ts.CreateNamespaces(t, "errs")

	for _, media := range []string{protobufMedia, "application/json"} {
		t.Run(media, func(t *testing.T) {
			log := &errorLog{}
			cms := kubernetes.NewForConfigOrDie(errorsConfig(ts, media, log)).CoreV1().ConfigMaps("errs")
			name := "cm-" + map[string]string{protobufMedia: "pb", "application/json": "json"}[media]
			checkClientErrors(t, log, media, clientErrorCases{
				get: func(ctx context.Context) error {
					_, err := cms.Get(ctx, "missing", metav1.GetOptions{})
					return err
				},
				notFound: `configmaps "missing" not found`,
				conflict: func(ctx context.Context) error {
					cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
					if err != nil {
						return fmt.Errorf("create: %w", err)
					}
					stale := cm.DeepCopy()
					cm.Data["k"] = "w"
					if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
						return fmt.Errorf("update: %w", err)
					}
					stale.Data["k"] = "x"
					_, err = cms.Update(ctx, stale, metav1.UpdateOptions{})
					return err
				},
				invalid: func(ctx context.Context) error {
					_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name"}}, metav1.CreateOptions{})
					return err
				},
				watch: func(ctx context.Context) error {
					w, err := cms.Watch(ctx, metav1.ListOptions{FieldSelector: "spec.nothing=x"})
					if err == nil {
						w.Stop()
					}
					return err
				},
			})
		})
	}

	t.Run("application/cbor", func(t *testing.T) {
		useCBORClients(t)
		log := &errorLog{}
		cfg := rest.CopyConfig(ts.Config)
		cfg.Wrap(log.wrap)
		dbs := versioned.NewForConfigOrDie(cfg).ExampleV1().Databases("errs")
		checkClientErrors(t, log, "application/cbor", clientErrorCases{
			get: func(ctx context.Context) error {
				_, err := dbs.Get(ctx, "missing", metav1.GetOptions{})
				return err
			},
			notFound: `databases.example.apiloom.dev "missing" not found`,
			conflict: func(ctx context.Context) error {
				db, err := dbs.Create(ctx, newDatabase("db"), metav1.CreateOptions{})
				if err != nil {
					return fmt.Errorf("create: %w", err)
				}
				stale := db.DeepCopy()
				db.Spec.Version = "17.0"
				if _, err := dbs.Update(ctx, db, metav1.UpdateOptions{}); err != nil {
					return fmt.Errorf("update: %w", err)
				}
				stale.Spec.Version = "17.1"
				_, err = dbs.Update(ctx, stale, metav1.UpdateOptions{})
				return err
			},
			invalid: func(ctx context.Context) error {
				_, err := dbs.Create(ctx, newDatabase("Bad_Name"), metav1.CreateOptions{})
				return err
			},
			watch: func(ctx context.Context) error {
				w, err := dbs.Watch(ctx, metav1.ListOptions{FieldSelector: "spec.nothing=x"})
				if err == nil {
					w.Stop()
				}
				return err
			},
		})
	})
}

// clientErrorCases are the requests checkClientErrors makes fail.
type clientErrorCases struct {
	get      func(context.Context) error // of a missing object
	notFound string                      // get's message
	conflict func(context.Context) error // an update from a stale copy
	invalid  func(context.Context) error // a create with a bad name
	watch    func(context.Context) error // a watch with a bad field selector
}

// checkClientErrors runs the cases and checks each error's kind, its
// Status' details, and that it came in media.
func checkClientErrors(t *testing.T, log *errorLog, media string, c clientErrorCases) {
	t.Helper()
	ctx := t.Context()
	check := func(what string, err error, is func(error) bool, code int) *metav1.Status {
		t.Helper()
		if !is(err) {
			t.Fatalf("%s: %v (%T)", what, err, err)
		}
		if want := fmt.Sprintf("%d %s", code, media); log.last() != want {
			t.Fatalf("%s: the server answered %q, want %q", what, log.last(), want)
		}
		var st apierrors.APIStatus
		if !errors.As(err, &st) || st.Status().Code != int32(code) {
			t.Fatalf("%s: %v is not an API status", what, err)
		}
		s := st.Status()
		return &s
	}

	s := check("get", c.get(ctx), apierrors.IsNotFound, http.StatusNotFound)
	if s.Message != c.notFound || s.Details == nil || s.Details.Name != "missing" {
		t.Fatalf("not found: %+v", s)
	}
	s = check("conflict", c.conflict(ctx), apierrors.IsConflict, http.StatusConflict)
	if s.Details == nil || s.Details.Name == "" {
		t.Fatalf("conflict: %+v", s)
	}
	s = check("invalid", c.invalid(ctx), apierrors.IsInvalid, http.StatusUnprocessableEntity)
	if s.Details == nil || len(s.Details.Causes) == 0 || s.Details.Causes[0].Field != "metadata.name" {
		t.Fatalf("invalid without its causes: %+v", s)
	}
	s = check("watch", c.watch(ctx), apierrors.IsBadRequest, http.StatusBadRequest)
	if !strings.Contains(s.Message, "spec.nothing") {
		t.Fatalf("watch: %+v", s)
	}
}
