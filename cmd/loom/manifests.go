package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/mod/modfile"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/version"
)

// pkiDir holds the CA and the serving certificate with their keys; it and
// the Secret's file are never committed.
const pkiDir = "deploy/pki"

// gitignored are the lines loom manifests makes sure the module's
// .gitignore has: the private keys.
var gitignored = []string{"/" + pkiDir + "/", "/" + secretManifest}

// runManifests is `loom manifests`: it writes deploy/, what `kubectl apply
// -f deploy/` needs to run the server behind a host cluster's aggregation
// layer, for the group versions apis/ has now.
func runManifests(dir string, args []string, stdout, stderr io.Writer, now time.Time) error {
	var d deployment
	var storage string
	fs := pflag.NewFlagSet("loom manifests", pflag.ContinueOnError)
	fs.StringVar(&d.Name, "name", "", "the name of the Service, the StatefulSet and the ServiceAccount, prefix of the other objects' (default: the module path's last element)")
	fs.StringVar(&d.Namespace, "namespace", "", "the namespace the server runs in (default: <name>-system)")
	fs.StringVar(&d.Image, "image", "", "the server's container image, as make image tags it (default: <name>:dev)")
	fs.StringVar(&storage, "storage-size", "1Gi", "the size of the embedded etcd's PersistentVolumeClaim")
	if err := parse(fs, args, stderr); err != nil {
		return err
	}

	// Every check before any write.
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return usageErrorf("no go.mod in %s: run loom manifests in the root of the module (loom init writes one)", dir)
	}
	module := modfile.ModulePath(gomod)
	if module == "" {
		return usageErrorf("%s has no module line: run loom manifests in the root of a module", filepath.Join(dir, "go.mod"))
	}
	if d.Name == "" {
		d.Name = deployName(module)
	}
	if errs := validation.IsDNS1035Label(d.Name); len(errs) > 0 || len(d.Name) > 63-len("-system") {
		return usageErrorf("invalid --name %q: it names a Service, so it must be a DNS label (lowercase letters, digits and '-', starting with a letter) of at most %d characters", d.Name, 63-len("-system"))
	}
	if d.Namespace == "" {
		d.Namespace = d.Name + "-system"
	}
	if errs := validation.IsDNS1123Label(d.Namespace); len(errs) > 0 {
		return usageErrorf("invalid --namespace %q: a namespace must be a DNS label (lowercase letters, digits and '-', at most 63)", d.Namespace)
	}
	if d.Image == "" {
		d.Image = d.Name + ":dev"
	}
	if strings.ContainsAny(d.Image, " \t\n") {
		return usageErrorf("invalid --image %q: an image reference has no spaces", d.Image)
	}
	if d.StorageSize, err = resource.ParseQuantity(storage); err != nil || d.StorageSize.Sign() <= 0 {
		return usageErrorf("invalid --storage-size %q: a positive quantity, e.g. 1Gi", storage)
	}
	if d.GroupVersions, err = moduleGroupVersions(dir); err != nil {
		return err
	}
	if len(d.GroupVersions) == 0 {
		return usageErrorf("apis/ has no group version: add a kind with loom create api first; each group version gets an APIService")
	}

	if d.PKI, err = loadOrCreatePKI(filepath.Join(dir, filepath.FromSlash(pkiDir)), d.dnsNames(), now); err != nil {
		return err
	}
	files, err := d.manifests()
	if err != nil {
		return err
	}
	if err := writePKI(filepath.Join(dir, filepath.FromSlash(pkiDir)), d.PKI); err != nil {
		return err
	}
	switch {
	case !d.PKI.caReused:
		fmt.Fprintf(stdout, "wrote %s/: a new CA, and a serving certificate for %s\n", pkiDir, strings.Join(d.dnsNames(), ", "))
	case !d.PKI.reused:
		fmt.Fprintf(stdout, "wrote %s/: the CA reused, a new serving certificate for %s\n", pkiDir, strings.Join(d.dnsNames(), ", "))
	}
	if err := writeFiles(dir, files, stdout); err != nil {
		return err
	}
	if err := ensureGitignored(dir, gitignored, stdout); err != nil {
		return err
	}
	var gvs []string
	for _, gv := range d.GroupVersions {
		gvs = append(gvs, gv.Group+"/"+gv.Version)
	}
	fmt.Fprintf(stdout, "\nServes %s in namespace %s with image %s.\n"+
		"Next: make image (and push it where the cluster pulls from), then kubectl apply -f deploy/.\n",
		strings.Join(gvs, ", "), d.Namespace, d.Image)
	return nil
}

// deployName is a Kubernetes name for the module: its path's last element
// (the one before a major version suffix), lowercased, with what a DNS
// label may not have turned into '-'.
func deployName(module string) string {
	name := path.Base(module)
	if majorSuffix.MatchString(name) && path.Dir(module) != "." {
		name = path.Base(path.Dir(module))
	}
	name = strings.Trim(notInLabel.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if name == "" || name[0] < 'a' || name[0] > 'z' {
		name = "api-" + name
	}
	if max := 63 - len("-system"); len(name) > max {
		name = strings.TrimRight(name[:max], "-")
	}
	return strings.TrimRight(name, "-")
}

var (
	majorSuffix = regexp.MustCompile(`^v[0-9]+$`)
	notInLabel  = regexp.MustCompile(`[^a-z0-9]+`)
)

// moduleGroupVersions returns the group versions of the module in dir, as
// loom create api writes them: apis/<group-dir>/<version>/ with the group
// in doc.go's +groupName marker. They come sorted by group, each group's
// versions in the order the server's discovery lists them (Kubernetes'
// version order), the first of them preferred.
func moduleGroupVersions(dir string) ([]groupVersion, error) {
	docs, err := filepath.Glob(filepath.Join(dir, "apis", "*", "*", "doc.go"))
	if err != nil {
		return nil, err
	}
	var gvs []groupVersion
	for _, doc := range docs {
		vdir := filepath.Dir(doc)
		v := filepath.Base(vdir)
		if !kubeVersion.MatchString(v) {
			continue // not a version's package
		}
		group, err := packageGroup(vdir)
		if err != nil {
			return nil, err
		}
		gvs = append(gvs, groupVersion{Group: group, Version: v})
	}
	slices.SortFunc(gvs, func(a, b groupVersion) int {
		if c := strings.Compare(a.Group, b.Group); c != 0 {
			return c
		}
		return -version.CompareKubeAwareVersionStrings(a.Version, b.Version)
	})
	for i := range gvs {
		gvs[i].Preferred = i == 0 || gvs[i-1].Group != gvs[i].Group
	}
	return gvs, nil
}

// ensureGitignored appends to dir's .gitignore the lines it lacks.
func ensureGitignored(dir string, lines []string, stdout io.Writer) error {
	p := filepath.Join(dir, ".gitignore")
	old, err := os.ReadFile(p)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(old), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var add bytes.Buffer
	for _, l := range lines {
		if !have[l] {
			add.WriteString(l + "\n")
		}
	}
	if add.Len() == 0 {
		return nil
	}
	if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
		old = append(old, '\n')
	}
	if err := os.WriteFile(p, append(old, add.Bytes()...), 0o644); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "wrote .gitignore: the private keys are not committed")
	return nil
}
