package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// admissionWebhookServer is a validating admission webhook on 127.0.0.1,
// over TLS with a certificate made for the run: it allows every review
// but that of the probe object, and counts them.
type admissionWebhookServer struct {
	url   string
	caPEM []byte
	calls atomic.Int64
	srv   *http.Server
	done  chan struct{} // closed when Serve has returned
}

func startAdmissionWebhook(probe string) (*admissionWebhookServer, error) {
	cert, caPEM, err := selfSignedLoopbackCert()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	w := &admissionWebhookServer{url: "https://" + ln.Addr().String(), caPEM: caPEM, done: make(chan struct{})}
	w.srv = &http.Server{
		Handler:           http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { w.review(rw, r, probe) }),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() {
		defer close(w.done)
		if err := w.srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			stderrLog("admission webhook: %v", err)
		}
	}()
	return w, nil
}

func (w *admissionWebhookServer) review(rw http.ResponseWriter, r *http.Request, probe string) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(rw, "bad AdmissionReview", http.StatusBadRequest)
		return
	}
	w.calls.Add(1)
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: review.Request.Name != probe}
	if !resp.Allowed {
		resp.Result = &metav1.Status{Message: "the probe is denied", Code: http.StatusForbidden}
	}
	review.Request, review.Response = nil, resp
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(&review)
}

// stop closes the server and waits for it.
func (w *admissionWebhookServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = w.srv.Shutdown(ctx)
	<-w.done
}

// selfSignedLoopbackCert is a key and a self-signed certificate for
// 127.0.0.1, valid for a day; the certificate is its own CA bundle.
func selfSignedLoopbackCert() (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(now.UnixNano()),
		Subject:               pkix.Name{CommonName: "apiloom-load admission webhook"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}
