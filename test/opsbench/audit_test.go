package opsbench

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"

	serverapi "github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/testserver"
)

// The audit configurations: every request audited at one level, to a log
// file (JSON, upstream's default blocking mode), or to a webhook whose
// port is closed (batch mode, the webhook's default: events buffered,
// sent in the background, dropped when the buffer is full).
func init() {
	configurations = append(configurations,
		configuration{name: "audit-metadata", options: auditLogTo("Metadata")},
		configuration{name: "audit-requestresponse", options: auditLogTo("RequestResponse")},
		configuration{name: "audit-webhook-down", options: auditWebhookDown},
	)
}

// auditPolicyFile writes a policy of one rule: every request at level.
func auditPolicyFile(b *testing.B, level string) string {
	p := filepath.Join(b.TempDir(), "policy.yaml")
	policy := "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: " + level + "\n"
	if err := os.WriteFile(p, []byte(policy), 0o600); err != nil {
		b.Fatal(err)
	}
	return p
}

func auditLogTo(level string) func(*testing.B) []testserver.Option {
	return func(b *testing.B) []testserver.Option {
		policy, log := auditPolicyFile(b, level), filepath.Join(b.TempDir(), "audit.log")
		return []testserver.Option{func(o *serverapi.Options) {
			o.Audit.PolicyFile = policy
			o.Audit.LogOptions.Path = log
			o.Audit.LogOptions.Format = "json"
		}}
	}
}

func auditWebhookDown(b *testing.B) []testserver.Option {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	cfg := filepath.Join(b.TempDir(), "webhook.kubeconfig")
	kubeconfig := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: sink\n  cluster: {server: \"http://%s\"}\n"+
		"contexts:\n- name: sink\n  context: {cluster: sink, user: \"\"}\ncurrent-context: sink\nusers: []\n", addr)
	if err := os.WriteFile(cfg, []byte(kubeconfig), 0o600); err != nil {
		b.Fatal(err)
	}
	policy := auditPolicyFile(b, "Metadata")
	return []testserver.Option{func(o *serverapi.Options) {
		o.Audit.PolicyFile = policy
		o.Audit.WebhookOptions.ConfigFile = cfg
	}}
}
