package apiserver

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"testing"
	"time"
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

func TestTokenPersists(t *testing.T) {
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
}

// TestExpiringCertificatesAreReplacedAtStart: a serving certificate (or
// CA) made long ago, now expired or about to, was served as it was and
// clients failed the TLS handshake; at start it is replaced, as is one that
// no longer covers the bind address.
func TestExpiringCertificatesAreReplacedAtStart(t *testing.T) {
	now := time.Now()
	leafOf := func(t *testing.T, c *servingCert) *x509.Certificate {
		t.Helper()
		leaf, err := x509.ParseCertificate(c.cert.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		return leaf
	}
	for _, tc := range []struct {
		name    string
		made    time.Time // when the first certificates were made
		bind    string    // the bind address at the second start
		renewed bool
		newCA   bool
	}{
		{"fresh", now.Add(-24 * time.Hour), "127.0.0.1", false, false},
		{"serving expired", now.AddDate(-1, 0, -1), "127.0.0.1", true, false},
		{"serving expiring", now.AddDate(-1, 0, 20), "127.0.0.1", true, false},
		{"CA expired", now.AddDate(-10, 0, -1), "127.0.0.1", true, true},
		{"bind address changed", now.Add(-24 * time.Hour), "10.1.2.3", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions()
			o.DataDir = t.TempDir()
			first, err := loadOrCreateServingCertAt(&o, tc.made)
			if err != nil {
				t.Fatal(err)
			}
			o.BindAddress = tc.bind
			second, err := loadOrCreateServingCertAt(&o, now)
			if err != nil {
				t.Fatal(err)
			}
			leaf := leafOf(t, second)
			if renewed := !bytes.Equal(first.cert.Certificate[0], second.cert.Certificate[0]); renewed != tc.renewed {
				t.Fatalf("renewed %v, want %v", renewed, tc.renewed)
			}
			if newCA := !bytes.Equal(first.caPEM, second.caPEM); newCA != tc.newCA {
				t.Fatalf("new CA %v, want %v", newCA, tc.newCA)
			}
			if tc.renewed != (len(second.notes) > 0) {
				t.Errorf("notes %q", second.notes)
			}
			pool := x509.NewCertPool()
			pool.AppendCertsFromPEM(second.caPEM)
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: tc.bind}); err != nil {
				t.Errorf("the certificate served does not verify now: %v", err)
			}
		})
	}
}

// TestOperatorCertificateExpiryIsReported: a certificate the operator
// brought is served as it is, with a note when it is about to expire.
func TestOperatorCertificateExpiryIsReported(t *testing.T) {
	o := DefaultOptions()
	o.DataDir = t.TempDir()
	if _, err := loadOrCreateServingCertAt(&o, time.Now().AddDate(-1, 0, 1)); err != nil {
		t.Fatal(err)
	}
	o.TLSCertFile, o.TLSKeyFile = o.path("pki", "apiserver.crt"), o.path("pki", "apiserver.key")
	c, err := loadOrCreateServingCertAt(&o, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.notes) != 1 || c.caPEM != nil {
		t.Errorf("notes %q, CA %v", c.notes, c.caPEM != nil)
	}
	if _, err := tls.LoadX509KeyPair(o.TLSCertFile, o.TLSKeyFile); err != nil {
		t.Fatal(err)
	}
}
