package apiserver

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"
	"go.uber.org/zap"

	"github.com/apiloom/apiloom/server/etcdclient"
	"github.com/apiloom/apiloom/server/snapshot"
)

const snapshotUsage = `usage:
  %[1]s snapshot save FILE [--data-dir DIR | --etcd-servers URLS [--etcd-cafile F --etcd-certfile F --etcd-keyfile F]]
  %[1]s snapshot restore FILE --data-dir NEW-DIR [--bump-revision N]
  %[1]s snapshot status FILE
`

// snapshotCommand is `<server> snapshot save|restore|status ...`: backs
// the etcd of a running server up, restores a backup into a new data
// directory, or checks one (docs/backup.md). Exit status as
// Command's.
func snapshotCommand(ctx context.Context, name string, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintf(stderr, snapshotUsage, name)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	sub := args[0]
	fs := pflag.NewFlagSet(name+" snapshot "+sub, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	o := DefaultOptions()
	var bump uint64
	switch sub {
	case "save":
		fs.StringVar(&o.DataDir, "data-dir", o.DataDir, "the running server's --data-dir, whose embedded etcd is snapshotted")
		fs.StringSliceVar(&o.EtcdServers, "etcd-servers", nil, "an external etcd's client URLs (the server's flag); the first member that answers is snapshotted")
		fs.StringVar(&o.EtcdCAFile, "etcd-cafile", "", "CA bundle to verify the external etcd")
		fs.StringVar(&o.EtcdCertFile, "etcd-certfile", "", "client certificate for the external etcd")
		fs.StringVar(&o.EtcdKeyFile, "etcd-keyfile", "", "client key for the external etcd")
	case "restore":
		o.DataDir = ""
		fs.StringVar(&o.DataDir, "data-dir", "", "the new data directory to create (must not exist, or be empty); required")
		fs.Uint64Var(&bump, "bump-revision", snapshot.DefaultRevisionBump, "how far to move etcd's revision past the snapshot's; the old revisions are marked compacted, so every client relists")
	case "status":
	default:
		fmt.Fprintf(stderr, "%s snapshot: unknown subcommand %q\n"+snapshotUsage, name, sub)
		return 2
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "%s snapshot %s: %v\n", name, sub, err)
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "%s snapshot %s: want one FILE, got %q\n", name, sub, fs.Args())
		return 2
	}
	file := fs.Arg(0)
	var err error
	switch sub {
	case "save":
		var target snapshot.Target
		if target, err = saveTarget(&o); err != nil {
			fmt.Fprintf(stderr, "%s snapshot save: %v\n", name, err)
			return 2
		}
		var info snapshot.Info
		if info, err = snapshot.Save(ctx, target, file); err == nil {
			fmt.Fprintf(stdout, "saved %s: etcd revision %d, %d keys, %d bytes, sha256 verified (from %s)\n", info.Path, info.Revision, info.Keys, info.Size, info.Endpoint)
		}
	case "restore":
		if o.DataDir == "" {
			fmt.Fprintf(stderr, "%s snapshot restore: --data-dir is required (a new, empty directory)\n", name)
			return 2
		}
		if bump < 1 {
			fmt.Fprintf(stderr, "%s snapshot restore: --bump-revision must be at least 1: clients must relist after a restore\n", name)
			return 2
		}
		err = restore(&o, file, bump, stdout)
	case "status":
		var info snapshot.Info
		if info, err = snapshot.Verify(file); err == nil {
			fmt.Fprintf(stdout, "%s: etcd revision %d, %d keys, %d bytes, sha256 verified\n", info.Path, info.Revision, info.Keys, info.Size)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s snapshot %s: %v\n", name, sub, err)
		return 1
	}
	return 0
}

// saveTarget is the etcd `snapshot save` reaches, checked as the server
// checks its own flags.
func saveTarget(o *Options) (snapshot.Target, error) {
	switch {
	case len(o.EtcdServers) == 0 && (o.EtcdCAFile != "" || o.EtcdCertFile != "" || o.EtcdKeyFile != ""):
		return snapshot.Target{}, errors.New("--etcd-cafile/--etcd-certfile/--etcd-keyfile need --etcd-servers")
	case (o.EtcdCertFile == "") != (o.EtcdKeyFile == ""):
		return snapshot.Target{}, errors.New("--etcd-certfile and --etcd-keyfile go together")
	case len(o.EtcdServers) > 0:
		return snapshotTarget(o, ""), nil
	case o.DataDir == "":
		return snapshot.Target{}, errors.New("--data-dir must not be empty")
	}
	ep, err := etcdclient.EmbeddedEndpoint(o.etcdConfig().Dir)
	if err != nil {
		return snapshot.Target{}, err
	}
	return snapshotTarget(o, ep), nil
}

// restore makes o.DataDir from file and says what the operator still has
// to bring: a snapshot holds etcd's data only.
func restore(o *Options, file string, bump uint64, stdout io.Writer) error {
	res, err := snapshot.Restore(snapshot.RestoreOptions{File: file, DataDir: o.DataDir, EtcdDir: o.etcdConfig().Dir, RevisionBump: bump}, zap.NewNop())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, `restored %s into %s: etcd revision %d (the snapshot's %d + %d), older revisions compacted, so clients relist.
Created only %s. Not in a snapshot, and not created:
  %s/pki/         the CA, serving and admin certificates (every client certificate is signed by pki/ca.key)
  %s/admin-token  the loopback bearer token
  %s/kubeconfig   the admin kubeconfig
  and any key file the server reads from its data directory (encryption at rest).
Copy them from the old data directory or their backup before starting the server, or it makes new ones
and every existing kubeconfig and client certificate stops working. Then: --data-dir %s
`, file, o.DataDir, res.Revision, res.Snapshot.Revision, bump, o.etcdConfig().Dir, o.DataDir, o.DataDir, o.DataDir, o.DataDir)
	return nil
}
