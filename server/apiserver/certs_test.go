package apiserver

import (
	"bytes"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestServingCertIsGeneratedOnceAndVerifies(t *testing.T) {
	o := DefaultOptions()
	o.DataDir = t.TempDir()
	first, err := loadOrCreateServingCert(&o)
	if err != nil {
		t.Fatal(err)
	}
	second, err := loadOrCreateServingCert(&o)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.cert.Certificate[0], second.cert.Certificate[0]) || !bytes.Equal(first.caPEM, second.caPEM) {
		t.Fatal("a restart generated a new certificate; existing kubeconfigs would stop working")
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(first.caPEM) {
		t.Fatal("CA PEM does not parse")
	}
	leaf, err := x509.ParseCertificate(first.cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"127.0.0.1", "localhost", "::1"} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: host}); err != nil {
			t.Errorf("certificate does not verify for %s: %v", host, err)
		}
	}
}

func TestTokenPersistsAndGuardsRequests(t *testing.T) {
	o := DefaultOptions()
	o.DataDir = t.TempDir()
	tok, err := loadOrCreateToken(&o)
	if err != nil {
		t.Fatal(err)
	}
	again, err := loadOrCreateToken(&o)
	if err != nil || again != tok || len(tok) != 64 {
		t.Fatalf("token not stable: %q %q %v", tok, again, err)
	}
	h := withBearerToken(tok, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	for _, tc := range []struct {
		path, auth string
		code       int
	}{
		{"/apis", "Bearer " + tok, http.StatusTeapot},
		{"/apis", "Bearer wrong", http.StatusUnauthorized},
		{"/apis", "", http.StatusUnauthorized},
		{"/readyz", "", http.StatusTeapot},
	} {
		r := httptest.NewRequest("GET", tc.path, nil)
		if tc.auth != "" {
			r.Header.Set("Authorization", tc.auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.code {
			t.Errorf("%s with %q: %d, want %d", tc.path, tc.auth, w.Code, tc.code)
		}
		if w.Code == http.StatusUnauthorized && !bytes.Contains(w.Body.Bytes(), []byte(`"reason":"Unauthorized"`)) {
			t.Errorf("401 without a Status body: %s", w.Body.String())
		}
	}
}
