package apiserver

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestAuditFlags: kube-apiserver's audit flags, with its defaults, and
// their validation in Validate's errors.
func TestAuditFlags(t *testing.T) {
	o := DefaultOptions()
	fs := pflag.NewFlagSet("apiloom", pflag.ContinueOnError)
	o.AddFlags(fs)
	for name, def := range map[string]string{
		"audit-policy-file": "", "audit-log-path": "", "audit-log-format": "json", "audit-log-mode": "blocking",
		"audit-log-maxage": "366", "audit-log-maxbackup": "100", "audit-log-maxsize": "100", "audit-log-compress": "false",
		"audit-webhook-config-file": "", "audit-webhook-mode": "batch", "audit-webhook-batch-buffer-size": "10000",
		"audit-webhook-batch-max-size": "400", "audit-webhook-batch-max-wait": "30s", "audit-webhook-initial-backoff": "10s",
		"audit-log-truncate-enabled": "false", "audit-webhook-truncate-max-event-size": "102400",
	} {
		f := fs.Lookup(name)
		if f == nil {
			t.Errorf("--%s is missing", name)
			continue
		}
		if f.DefValue != def {
			t.Errorf("--%s defaults to %q, want %q", name, f.DefValue, def)
		}
	}
	if err := fs.Parse([]string{"--audit-log-path=/tmp/x", "--audit-log-format=xml", "--audit-log-mode=sometimes", "--data-dir="}); err != nil {
		t.Fatal(err)
	}
	err := o.Validate()
	if err == nil {
		t.Fatal("bad audit flags validate")
	}
	for _, want := range []string{"invalid audit log format xml", "sometimes", "--data-dir"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v: does not mention %q", err, want)
		}
	}
}

// TestAuditOff: without a policy file, or without a backend, there is no
// audit (nil, no filter).
func TestAuditOff(t *testing.T) {
	o := DefaultOptions()
	if a, err := newAuditing(&o.Audit); err != nil || a != nil {
		t.Fatalf("no flags: %v, %v", a, err)
	}
	o.Audit.LogOptions.Path = t.TempDir() + "/audit.log"
	if a, err := newAuditing(&o.Audit); err != nil || a != nil {
		t.Fatalf("a log without a policy: %v, %v", a, err)
	}
	o.Audit.PolicyFile = t.TempDir() + "/missing.yaml"
	if _, err := newAuditing(&o.Audit); err == nil {
		t.Fatal("a missing policy file is no error")
	}
}
