package testenv

import (
	"io"
	"net/http"
	"testing"

	"k8s.io/client-go/rest"
)

// Get sends GET path to cfg's server with cfg's credentials and returns
// the response's status code and body; a failed request ends t.
func Get(t testing.TB, cfg *rest.Config, path string) (int, string) {
	t.Helper()
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), "GET", cfg.Host+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading the body: %v", path, err)
	}
	return resp.StatusCode, string(body)
}
