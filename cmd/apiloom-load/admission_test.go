package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestParseAdmissionRound(t *testing.T) {
	for name, want := range map[string]admissionConfig{
		"none": {}, "policy-1": {policies: 1}, "policies-10": {policies: 10}, "webhook-1": {webhook: true},
	} {
		got, err := parseAdmissionRound(name)
		if err != nil || got != want {
			t.Errorf("%s: %+v, %v; want %+v", name, got, err, want)
		}
	}
	for _, bad := range []string{"", "policies-0", "policies-101", "policies-x", "webhook-2", "policy-2"} {
		if _, err := parseAdmissionRound(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestAdmissionWebhook: the webhook serves TLS that its own caBundle
// verifies for 127.0.0.1, denies the probe, allows the rest and counts
// the reviews.
func TestAdmissionWebhook(t *testing.T) {
	w, err := startAdmissionWebhook("probe")
	if err != nil {
		t.Fatal(err)
	}
	defer w.stop()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(w.caPEM) {
		t.Fatal("caBundle holds no certificate")
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer client.CloseIdleConnections()
	review := func(name string) *admissionv1.AdmissionResponse {
		t.Helper()
		body, _ := json.Marshal(&admissionv1.AdmissionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Request:  &admissionv1.AdmissionRequest{UID: types.UID("uid-" + name), Name: name},
		})
		resp, err := client.Post(w.url+"/validate", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out admissionv1.AdmissionReview
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Response == nil {
			t.Fatalf("%s: %v, %+v", name, err, out)
		}
		if out.Response.UID != types.UID("uid-"+name) {
			t.Fatalf("%s: response UID %q", name, out.Response.UID)
		}
		return out.Response
	}
	if r := review("load-000001"); !r.Allowed {
		t.Errorf("an object was denied: %+v", r)
	}
	if r := review("probe"); r.Allowed || r.Result == nil || r.Result.Message == "" {
		t.Errorf("the probe was not denied with a message: %+v", r)
	}
	if n := w.calls.Load(); n != 2 {
		t.Errorf("%d calls counted, want 2", n)
	}
}

// TestAdmissionCompare: repeated rounds are pooled by name (creates over
// time, CPU over creates), and every run's rounds are divided by the
// first run's first round.
func TestAdmissionCompare(t *testing.T) {
	round := func(name string, created int64, took, cpu time.Duration) admissionRound {
		return admissionRound{Name: name, Created: created, CreateTime: took, CreateRate: float64(created) / took.Seconds(),
			CPU: cpuSpan{Total: cpu}, CPUPerCreate: cpu / time.Duration(created)}
	}
	off := &result{Label: "off", Admission: &admissionResult{Rounds: []admissionRound{
		round("none", 1000, time.Second, 100*time.Millisecond), round("none", 1000, 3*time.Second, 300*time.Millisecond)}}}
	on := &result{Label: "on", Admission: &admissionResult{Rounds: []admissionRound{
		round("none", 1000, time.Second, 150*time.Millisecond), round("policy-1", 1000, 2*time.Second, 400*time.Millisecond),
		{Name: "webhook-1", Error: "not in effect"}}}}
	p, ok := off.Admission.pooled("none")
	if !ok || p.Created != 2000 || p.CreateRate != 500 || p.CPUPerCreate != 200*time.Microsecond {
		t.Fatalf("pooled: %+v", p)
	}
	if _, ok := on.Admission.pooled("webhook-1"); ok {
		t.Fatal("a round that created nothing was pooled")
	}
	want := map[string]float64{
		"admission policy-1 CPU/create ÷ off none": 2, "admission policy-1 creates/s ÷ off none": 1,
		"admission none CPU/create ÷ off none": 0.75, "admission none server CPU µs/create": 150,
	}
	for _, m := range admissionMetrics([]*result{off, on}) {
		if w, ok := want[m.name]; ok {
			if v, ok := m.value(on); !ok || v != w {
				t.Errorf("%s: %v, %v; want %v", m.name, v, ok, w)
			}
			delete(want, m.name)
		}
	}
	if len(want) > 0 {
		t.Errorf("rows missing: %v", want)
	}
	if rows := admissionRows(off.Admission); len(rows) != 4 || rows[3][0] != "  all none" {
		t.Errorf("summary rows: %q", rows)
	}
}
