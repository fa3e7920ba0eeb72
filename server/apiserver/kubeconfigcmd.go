package apiserver

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"
)

// kubeconfigCommand is `<server> kubeconfig --user NAME [--group G]...`:
// it writes a kubeconfig for a new user, whose credential is a client
// certificate signed by the server's CA (read from --data-dir/pki), which
// the server trusts without being told of the user; what the user may do
// is then up to authorization. It needs no running server, and
// the server needs no restart. Exit status as Command's.
func kubeconfigCommand(name string, args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet(name+" kubeconfig", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", DefaultOptions().DataDir, "the server's --data-dir, whose pki/ca.{crt,key} sign the certificate")
	userName := fs.String("user", "", "the user's name (the certificate's CommonName); required")
	groups := fs.StringArray("group", nil, "a group of the user (the certificate's Organization); repeat for several")
	server := fs.String("server", "", "the server's URL; default: the one of the kubeconfig the server wrote into --data-dir")
	out := fs.String("out", "", "file to write the kubeconfig to (readable by its owner only); default: standard output")
	days := fs.Int("expiry-days", 365, "how many days the certificate is valid (at most as long as the server's CA)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "%s kubeconfig: %v\n", name, err)
		return 2
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "%s kubeconfig: unexpected arguments %q\n", name, fs.Args())
		return 2
	case *userName == "":
		fmt.Fprintf(stderr, "%s kubeconfig: --user is required\n", name)
		return 2
	case *days < 1:
		fmt.Fprintf(stderr, "%s kubeconfig: --expiry-days must be at least 1\n", name)
		return 2
	}
	if err := writeNewUserKubeconfig(*dataDir, *userName, *groups, *server, *out, time.Duration(*days)*24*time.Hour, stdout); err != nil {
		fmt.Fprintf(stderr, "%s kubeconfig: %v\n", name, err)
		return 1
	}
	return 0
}

func writeNewUserKubeconfig(dataDir, userName string, groups []string, server, out string, validFor time.Duration, stdout io.Writer) error {
	// The cluster as the admin's kubeconfig has it: its URL, and the CA
	// the serving certificate verifies by (the operator's, if they
	// brought one, which is not the CA signing client certificates).
	var caPEM []byte
	if admin, err := clientcmd.LoadFromFile(filepath.Join(dataDir, "kubeconfig")); err == nil {
		if ctx := admin.Contexts[admin.CurrentContext]; ctx != nil && admin.Clusters[ctx.Cluster] != nil {
			c := admin.Clusters[ctx.Cluster]
			caPEM = c.CertificateAuthorityData
			if server == "" {
				server = c.Server
			}
		}
	} else if caPEM, err = os.ReadFile(filepath.Join(dataDir, "pki", "ca.crt")); err != nil {
		return fmt.Errorf("%w: %w", ErrNoCA, err)
	}
	if server == "" {
		return errors.New("no --server, and no kubeconfig in --data-dir to take it from")
	}
	cert, err := IssueClientCert(dataDir, userName, groups, validFor)
	if err != nil {
		return err
	}
	if out != "" {
		return writeUserKubeconfig(out, server, caPEM, userName, cert)
	}
	b, err := userKubeconfig(server, caPEM, userName, cert)
	if err != nil {
		return err
	}
	_, err = stdout.Write(b)
	return err
}
