package apiserver

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"slices"
	"testing"
	"time"
)

// TestAdminCertIsKeptAndRenewed: the admin's client certificate survives
// a restart (kubeconfigs copied elsewhere keep working), is renewed with
// the CA that signs it and near its own end, and names apiloom:admin in
// system:masters, for client authentication.
func TestAdminCertIsKeptAndRenewed(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name    string
		made    time.Time
		renewed bool
	}{
		{"fresh", now.Add(-24 * time.Hour), false},
		{"expiring", now.AddDate(-1, 0, 20), true},
		{"CA renewed", now.AddDate(-10, 0, -1), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions()
			o.DataDir = t.TempDir()
			first, _, err := loadOrCreateAdminCertAt(&o, tc.made)
			if err != nil {
				t.Fatal(err)
			}
			second, notes, err := loadOrCreateAdminCertAt(&o, now)
			if err != nil {
				t.Fatal(err)
			}
			if renewed := !bytes.Equal(first.CertPEM, second.CertPEM); renewed != tc.renewed || renewed != (len(notes) > 0) {
				t.Fatalf("renewed %v (notes %q), want %v", renewed, notes, tc.renewed)
			}
			block, _ := pem.Decode(second.CertPEM)
			leaf, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			ca, _ := loadCA(o.path("pki", "ca.crt"), o.path("pki", "ca.key"), now)
			roots := x509.NewCertPool()
			roots.AddCert(ca)
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
				t.Errorf("does not verify as a client certificate now: %v", err)
			}
			if leaf.Subject.CommonName != AdminUser || !slices.Equal(leaf.Subject.Organization, []string{"system:masters"}) {
				t.Errorf("names %s", leaf.Subject)
			}
		})
	}
}
