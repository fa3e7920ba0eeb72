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
	"errors"
	"io"
	"math/big"
	"net"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// baselineResult is what this machine charges for the unavoidable work of
// delivering one ~1 KiB event: a loopback write (plain TCP and TLS) and
// encoding the object once. Server CPU per event is read against it.
type baselineResult struct {
	ObjectBytes   int           `json:"objectBytes"`
	LoopbackWrite time.Duration `json:"loopbackWrite"`
	TLSWrite      time.Duration `json:"tlsWrite"`
	JSONEncode    time.Duration `json:"jsonEncode"`
	JSONDecode    time.Duration `json:"jsonDecode"` // json-iterator, for the clients' side
}

// sampleObject mirrors a typical stored object: metadata plus a spec with
// a payload string, ~1 KiB encoded.
type sampleObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Engine  string `json:"engine"`
		Version string `json:"version"`
	} `json:"spec"`
}

func runBaseline(ctx context.Context, c *config) (*baselineResult, error) {
	obj := sampleObject{TypeMeta: metav1.TypeMeta{APIVersion: "example.apiloom.dev/v1", Kind: "Database"}}
	obj.Name, obj.Namespace, obj.UID, obj.ResourceVersion, obj.Generation = "load-fanout-001", "bench", "4b7d4a8e-5a43-4cf5-9c4e-0a6f3c1bde21", "123456", 7
	obj.CreationTimestamp = metav1.NewTime(time.Unix(1700000000, 0))
	obj.Labels = map[string]string{labelSeq: "1234"}
	obj.Annotations = map[string]string{annotationSent: "1700000000123456789"}
	obj.Spec.Engine, obj.Spec.Version = "postgres", payload("seq=1234 ", c.PayloadBytes)
	encoded, err := json.Marshal(&obj)
	if err != nil {
		return nil, err
	}
	res := &baselineResult{ObjectBytes: len(encoded)}
	res.JSONEncode = perOp(ctx, c.BaselineTime, func() error { _, err := json.Marshal(&obj); return err })
	res.JSONDecode = perOp(ctx, c.BaselineTime, func() error { var o sampleObject; return jsonAPI.Unmarshal(encoded, &o) })
	frame := make([]byte, 1024)
	if res.LoopbackWrite, err = timeLoopbackWrites(ctx, c.BaselineTime, frame, false); err != nil {
		return nil, err
	}
	if res.TLSWrite, err = timeLoopbackWrites(ctx, c.BaselineTime, frame, true); err != nil {
		return nil, err
	}
	return res, nil
}

// perOp runs op in batches for about d and returns the mean time per call;
// it stops early, with what it has, at the first error or when ctx ends.
func perOp(ctx context.Context, d time.Duration, op func() error) time.Duration {
	const batch = 256
	start := time.Now()
	n := 0
	for time.Since(start) < d && ctx.Err() == nil {
		for range batch {
			if op() != nil {
				return perCall(time.Since(start), n)
			}
			n++
		}
	}
	return perCall(time.Since(start), n)
}

func perCall(total time.Duration, n int) time.Duration {
	if n == 0 {
		return 0
	}
	return total / time.Duration(n)
}

// timeLoopbackWrites writes frame over a loopback connection to a sink
// that discards it, one Write per frame, and returns the mean per write.
func timeLoopbackWrites(ctx context.Context, d time.Duration, frame []byte, useTLS bool) (time.Duration, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	var serverTLS, clientTLS *tls.Config
	if useTLS {
		cert, err := selfSignedCert()
		if err != nil {
			_ = ln.Close()
			return 0, err
		}
		serverTLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		clientTLS = &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec // our own throwaway sink
		ln = tls.NewListener(ln, serverTLS)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer ln.Close()
	wg.Go(func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = io.Copy(io.Discard, conn)
	})
	var conn net.Conn
	var dialer net.Dialer
	if useTLS {
		td := tls.Dialer{NetDialer: &dialer, Config: clientTLS}
		conn, err = td.DialContext(ctx, "tcp", ln.Addr().String())
	} else {
		conn, err = dialer.DialContext(ctx, "tcp", ln.Addr().String())
	}
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	if tc, ok := conn.(*tls.Conn); ok {
		if err := tc.HandshakeContext(ctx); err != nil {
			return 0, err
		}
	}
	var werr error
	per := perOp(ctx, d, func() error { _, werr = conn.Write(frame); return werr })
	if werr != nil && !errors.Is(werr, net.ErrClosed) {
		return 0, werr
	}
	return per, nil
}

// selfSignedCert makes a throwaway certificate for the TLS sink.
func selfSignedCert() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "apiloom-load sink"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
