package apiserver

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestSnapshotCommandUsage(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full")
	if err := os.MkdirAll(filepath.Join(full, "pki"), 0o700); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.db")
	if err := os.WriteFile(bad, bytes.Repeat([]byte{1}, 512+32), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "usage:"},
		{[]string{"--help"}, 0, "usage:"},
		{[]string{"copy", "f"}, 2, `unknown subcommand "copy"`},
		{[]string{"save"}, 2, "want one FILE"},
		{[]string{"save", "a", "b"}, 2, "want one FILE"},
		{[]string{"save", "f", "--etcd-cafile", "ca.crt"}, 2, "need --etcd-servers"},
		{[]string{"save", "f", "--etcd-servers", "https://e:2379", "--etcd-certfile", "c.crt"}, 2, "go together"},
		{[]string{"save", "f", "--data-dir", strings.Repeat("d", 120)}, 2, "too long for a unix socket"},
		{[]string{"save", "f", "--nope"}, 2, "unknown flag: --nope"},
		{[]string{"restore", "f"}, 2, "--data-dir is required"},
		{[]string{"restore", "f", "--data-dir", filepath.Join(dir, "new"), "--bump-revision", "0"}, 2, "at least 1"},
		{[]string{"restore", "f", "--data-dir", filepath.Join(dir, "new"), "--etcd-servers", "x"}, 2, "unknown flag: --etcd-servers"},
		{[]string{"restore", bad, "--data-dir", full}, 1, "data directory is not empty: " + full + " has " + filepath.Join(full, "pki")},
		{[]string{"restore", bad, "--data-dir", filepath.Join(dir, "new")}, 1, "not a whole etcd snapshot"},
		{[]string{"restore", filepath.Join(dir, "missing.db"), "--data-dir", filepath.Join(dir, "new")}, 1, "no such file"},
		{[]string{"status", bad}, 1, "sha256"},
	} {
		var stdout, stderr bytes.Buffer
		code := snapshotCommand(t.Context(), "apiloom", c.args, &stdout, &stderr)
		if code != c.code || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("snapshot %q: exit %d, stderr %q; want %d and %q", c.args, code, stderr.String(), c.code, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); !os.IsNotExist(err) {
		t.Errorf("refused restores made the data dir: %v", err)
	}
}

func TestSnapshotFlags(t *testing.T) {
	for _, c := range []struct {
		args    []string
		enabled bool
		err     string
	}{
		{nil, true, ""},
		{[]string{"--etcd-servers", "http://e:2379"}, false, ""},
		{[]string{"--etcd-servers", "http://e:2379", "--etcd-disable-snapshots=false"}, true, ""},
		{[]string{"--etcd-disable-snapshots"}, false, ""},
		{[]string{"--etcd-disable-snapshots", "--etcd-snapshot-retention", "0"}, false, ""},
		{[]string{"--etcd-snapshot-retention", "0"}, true, "--etcd-snapshot-retention must be at least 1"},
		{[]string{"--etcd-snapshot-schedule-cron", "0 */12 * *"}, true, "--etcd-snapshot-schedule-cron"},
		{[]string{"--etcd-snapshot-schedule-cron", "@every 1h", "--etcd-snapshot-dir", "/backup"}, true, ""},
	} {
		o := parseOptions(t, c.args...)
		err := o.validateSnapshots()
		switch {
		case o.snapshotsEnabled() != c.enabled:
			t.Errorf("%q: enabled %v; want %v", c.args, o.snapshotsEnabled(), c.enabled)
		case c.err == "" && len(err) > 0, c.err != "" && (len(err) == 0 || !strings.Contains(err[0].Error(), c.err)):
			t.Errorf("%q: %v; want %q", c.args, err, c.err)
		}
	}
	o := parseOptions(t)
	if o.Snapshots.Schedule != "0 */12 * * *" || o.Snapshots.Retention != 5 || o.snapshotDir() != filepath.Join(o.DataDir, "snapshots") {
		t.Errorf("defaults %+v, dir %s", o.Snapshots, o.snapshotDir())
	}
}

// parseOptions is the default options with the server's flags args.
func parseOptions(t *testing.T, args ...string) Options {
	t.Helper()
	o := DefaultOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return o
}
