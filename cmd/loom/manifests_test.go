package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// deployModule returns a module with three group versions in two groups,
// shop.example.com/v1 and v1beta1, billing.example.com/v1alpha1.
func deployModule(t *testing.T) string {
	t.Helper()
	dir := shopModule(t)
	for _, args := range [][]string{
		{"--group", "shop.example.com", "--version", "v1beta1", "--kind", "Cart"},
		{"--group", "billing.example.com", "--version", "v1alpha1", "--kind", "Invoice", "--namespaced=false"},
	} {
		if code, _, stderr := loom(t, dir, append([]string{"create", "api"}, args...)...); code != 0 {
			t.Fatalf("create api %v: exit %d: %s", args, code, stderr)
		}
	}
	return dir
}

// deployed is deploy/ decoded: the typed objects by kind, the APIServices
// as their JSON.
type deployed struct {
	objects     map[string][]runtime.Object // by kind
	apiServices []map[string]any
	files       map[string][]string // kinds by file
}

// strictDecoder refuses a field the type does not have and a duplicate.
var strictDecoder = serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()

// readDeploy decodes every document of deploy/*.yaml strictly as the
// kind it says it is.
func readDeploy(t *testing.T, dir string) *deployed {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "deploy", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	d := &deployed{objects: map[string][]runtime.Object{}, files: map[string][]string{}}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if len(bytes.TrimSpace(stripComments(doc))) == 0 {
				continue
			}
			var tm struct{ APIVersion, Kind string }
			if err := yaml.Unmarshal(doc, &tm); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			d.files[filepath.Base(p)] = append(d.files[filepath.Base(p)], tm.Kind)
			if tm.APIVersion == "apiregistration.k8s.io/v1" {
				var m map[string]any
				if err := yaml.Unmarshal(doc, &m); err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				d.apiServices = append(d.apiServices, m)
				continue
			}
			obj, gvk, err := strictDecoder.Decode(doc, nil, nil)
			if err != nil {
				t.Fatalf("%s: a %s/%s that does not decode strictly: %v\n%s", p, tm.APIVersion, tm.Kind, err, doc)
			}
			if gvk.Kind != tm.Kind {
				t.Fatalf("%s: decoded %s as %s", p, tm.Kind, gvk.Kind)
			}
			d.objects[gvk.Kind] = append(d.objects[gvk.Kind], obj)
		}
	}
	return d
}

// stripComments drops the YAML comment lines of doc.
func stripComments(doc []byte) []byte {
	var out []byte
	for _, l := range bytes.SplitAfter(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(l), []byte("#")) {
			out = append(out, l...)
		}
	}
	return out
}

// only returns the one object of kind, ending t if there is not one.
func only[T runtime.Object](t *testing.T, d *deployed, kind string) T {
	t.Helper()
	if n := len(d.objects[kind]); n != 1 {
		t.Fatalf("%d objects of kind %s, want 1", n, kind)
	}
	return d.objects[kind][0].(T)
}

func TestManifests(t *testing.T) {
	dir := deployModule(t)
	code, stdout, stderr := loom(t, dir, "manifests")
	if code != 0 {
		t.Fatalf("manifests: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "a new CA") {
		t.Errorf("the first run does not say it made a CA:\n%s", stdout)
	}
	d := readDeploy(t, dir)
	const ns, svc = "shop-system", "shop"

	// The files, in the order kubectl apply -f deploy/ creates them: the
	// namespace before what lives in it.
	want := map[string][]string{
		"00-namespace.yaml":       {"Namespace"},
		"10-serviceaccount.yaml":  {"ServiceAccount"},
		"20-rbac.yaml":            {"ClusterRoleBinding", "RoleBinding", "ClusterRole", "ClusterRoleBinding"},
		"25-rbac-aggregated.yaml": {"ClusterRole", "ClusterRole", "ClusterRole", "ClusterRole"},
		"30-host-kubeconfig.yaml": {"ConfigMap"},
		"40-serving-cert.yaml":    {"Secret"},
		"50-statefulset.yaml":     {"StatefulSet"},
		"60-service.yaml":         {"Service"},
		"70-apiservices.yaml":     {"APIService", "APIService", "APIService"},
	}
	for f, kinds := range want {
		if !slices.Equal(d.files[f], kinds) {
			t.Errorf("%s holds %v, want %v", f, d.files[f], kinds)
		}
	}
	if len(d.files) != len(want) {
		t.Errorf("deploy/ has %d files, want %d: %v", len(d.files), len(want), d.files)
	}
	if n := only[*corev1.Namespace](t, d, "Namespace"); n.Name != ns {
		t.Errorf("namespace %q, want %q", n.Name, ns)
	}

	// The APIServices: one per group version, the preferred version of
	// each group first, each carrying the CA that signed the Secret's
	// certificate for the Service's names.
	secret := only[*corev1.Secret](t, d, "Secret")
	if secret.Type != corev1.SecretTypeTLS || secret.Namespace != ns || secret.Name != "shop-serving-cert" {
		t.Fatalf("secret %s/%s of type %s", secret.Namespace, secret.Name, secret.Type)
	}
	if _, err := tls.X509KeyPair(secret.Data["tls.crt"], secret.Data["tls.key"]); err != nil {
		t.Fatalf("the Secret's certificate and key: %v", err)
	}
	serving := parseCert(t, secret.Data["tls.crt"])
	gotAS := map[string]string{}
	for _, as := range d.apiServices {
		name := str(t, as, "metadata", "name")
		group, version := str(t, as, "spec", "group"), str(t, as, "spec", "version")
		if name != version+"."+group {
			t.Errorf("APIService %s serves %s/%s", name, group, version)
		}
		gotAS[name] = str(t, as, "spec", "versionPriority")
		if str(t, as, "spec", "groupPriorityMinimum") != "1000" || str(t, as, "spec", "insecureSkipTLSVerify") != "false" {
			t.Errorf("APIService %s: %v", name, as["spec"])
		}
		if s := str(t, as, "spec", "service", "namespace") + "/" + str(t, as, "spec", "service", "name") + ":" + str(t, as, "spec", "service", "port"); s != ns+"/"+svc+":443" {
			t.Errorf("APIService %s points at %s", name, s)
		}
		caPEM, err := base64.StdEncoding.DecodeString(str(t, as, "spec", "caBundle"))
		if err != nil {
			t.Fatalf("APIService %s: caBundle is not base64: %v", name, err)
		}
		ca := parseCert(t, caPEM)
		if !ca.IsCA || serving.CheckSignatureFrom(ca) != nil {
			t.Fatalf("APIService %s: caBundle is not the CA that signed the serving certificate", name)
		}
		roots := x509.NewCertPool()
		roots.AddCert(ca)
		for _, host := range []string{svc + "." + ns + ".svc", svc + "." + ns + ".svc.cluster.local"} {
			if _, err := serving.Verify(x509.VerifyOptions{DNSName: host, Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
				t.Errorf("APIService %s: its caBundle does not verify the Secret's certificate for %s: %v", name, host, err)
			}
		}
		if _, err := serving.Verify(x509.VerifyOptions{DNSName: "shop.default.svc", Roots: roots}); err == nil {
			t.Errorf("the serving certificate verifies for a name it was not made for")
		}
	}
	wantAS := map[string]string{"v1.shop.example.com": "20", "v1beta1.shop.example.com": "15", "v1alpha1.billing.example.com": "20"}
	if !maps.Equal(gotAS, wantAS) {
		t.Errorf("APIServices and their versionPriority %v, want %v", gotAS, wantAS)
	}

	checkStatefulSet(t, d, ns)
	checkHostAccess(t, d, ns)

	// The private keys are not committed, nor readable by others.
	gitignore, _ := os.ReadFile(filepath.Join(dir, ".gitignore"))
	for _, l := range []string{"/deploy/pki/", "/deploy/40-serving-cert.yaml"} {
		if !slices.Contains(strings.Split(string(gitignore), "\n"), l) {
			t.Errorf(".gitignore lacks %s:\n%s", l, gitignore)
		}
	}
	for _, f := range []string{"deploy/pki/ca.key", "deploy/pki/tls.key", "deploy/40-serving-cert.yaml"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v, want 0600", f, err, fi.Mode())
		}
	}

	// A re-run changes nothing: the same CA, certificate, files.
	before := snapshot(t, dir)
	if code, stdout, stderr := loom(t, dir, "manifests"); code != 0 || strings.Contains(stdout, "wrote deploy/pki/") {
		t.Fatalf("second run: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if after := snapshot(t, dir); after != before {
		t.Errorf("a second run changed the module")
	}
}

// TestManifestsRenew checks what a re-run replaces: the serving
// certificate, not the CA, for other names; both near their end; the
// APIServices when create api adds a group version.
func TestManifestsRenew(t *testing.T) {
	dir := deployModule(t)
	if code, _, stderr := loom(t, dir, "manifests"); code != 0 {
		t.Fatalf("manifests: exit %d: %s", code, stderr)
	}
	ca0, cert0 := readFile(t, dir, "deploy/pki/ca.crt"), readFile(t, dir, "deploy/pki/tls.crt")

	// Another namespace: the same CA, a certificate for the new names.
	code, stdout, stderr := loom(t, dir, "manifests", "--namespace", "shops")
	if code != 0 || !strings.Contains(stdout, "the CA reused") {
		t.Fatalf("--namespace shops: exit %d:\n%s%s", code, stdout, stderr)
	}
	if !bytes.Equal(readFile(t, dir, "deploy/pki/ca.crt"), ca0) || bytes.Equal(readFile(t, dir, "deploy/pki/tls.crt"), cert0) {
		t.Fatalf("another namespace: want the CA kept and the certificate replaced")
	}
	d := readDeploy(t, dir)
	serving := parseCert(t, only[*corev1.Secret](t, d, "Secret").Data["tls.crt"])
	if !slices.Equal(serving.DNSNames, []string{"shop.shops.svc", "shop.shops.svc.cluster.local"}) {
		t.Errorf("certificate for %v after --namespace shops", serving.DNSNames)
	}
	for _, as := range d.apiServices {
		if str(t, as, "spec", "service", "namespace") != "shops" {
			t.Errorf("APIService %s still points at %s", str(t, as, "metadata", "name"), str(t, as, "spec", "service", "namespace"))
		}
	}

	// 340 days on, both are within 30 days of their end: both replaced.
	var out, errOut bytes.Buffer
	if err := runManifests(dir, []string{"--namespace", "shops"}, &out, &errOut, time.Now().Add(340*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(readFile(t, dir, "deploy/pki/ca.crt"), ca0) || !strings.Contains(out.String(), "a new CA") {
		t.Errorf("a CA near its end was kept:\n%s", out.String())
	}

	// A group version create api adds gets its APIService from the next run.
	code, stdout, stderr = loom(t, dir, "create", "api", "--group", "pay.example.com", "--version", "v1", "--kind", "Payment")
	if code != 0 || !strings.Contains(stdout, "make manifests adds its APIService") {
		t.Fatalf("create api: exit %d:\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr := loom(t, dir, "manifests"); code != 0 {
		t.Fatalf("manifests: exit %d: %s", code, stderr)
	}
	var names []string
	for _, as := range readDeploy(t, dir).apiServices {
		names = append(names, str(t, as, "metadata", "name"))
	}
	if !slices.Contains(names, "v1.pay.example.com") || len(names) != 4 {
		t.Errorf("APIServices %v after create api added pay.example.com/v1", names)
	}
}

func TestManifestsRefusals(t *testing.T) {
	dir := deployModule(t)
	noAPIs := t.TempDir()
	if err := os.WriteFile(filepath.Join(noAPIs, "go.mod"), []byte("module example.com/empty\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir  string
		args []string
		rule string
	}{
		{t.TempDir(), nil, "no go.mod"},
		{noAPIs, nil, "apis/ has no group version"},
		{dir, []string{"--namespace", "Shop_System"}, "invalid --namespace"},
		{dir, []string{"--name", "9shop"}, "invalid --name"},
		{dir, []string{"--storage-size", "lots"}, "invalid --storage-size"},
		{dir, []string{"--image", "shop dev"}, "invalid --image"},
		{dir, []string{"deploy"}, "every input is a flag"},
	} {
		before := snapshot(t, tc.dir)
		code, stdout, stderr := loom(t, tc.dir, append([]string{"manifests"}, tc.args...)...)
		if code != 2 || !strings.HasPrefix(stderr, "loom: ") || !strings.Contains(stderr, tc.rule) || stdout != "" {
			t.Errorf("manifests %v: exit %d, want 2 naming %q:\n%s%s", tc.args, code, tc.rule, stdout, stderr)
		}
		if snapshot(t, tc.dir) != before {
			t.Errorf("manifests %v changed the directory", tc.args)
		}
	}
}

func TestDeployName(t *testing.T) {
	for module, want := range map[string]string{
		"example.com/shop":                       "shop",
		"example.com/shop/v2":                    "shop",
		"github.com/Acme/My_Shop.api":            "my-shop-api",
		"example.com/2shop":                      "api-2shop",
		"example.com/" + strings.Repeat("a", 70): strings.Repeat("a", 56),
	} {
		if got := deployName(module); got != want {
			t.Errorf("deployName(%q) = %q, want %q", module, got, want)
		}
	}
}

// checkStatefulSet checks that the server runs with the flags of its
// aggregated mode, each file they name mounted where they name it.
func checkStatefulSet(t *testing.T, d *deployed, ns string) {
	t.Helper()
	sts := only[*appsv1.StatefulSet](t, d, "StatefulSet")
	if sts.Namespace != ns || *sts.Spec.Replicas != 1 || len(sts.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("statefulset %s/%s, %d replicas", sts.Namespace, sts.Name, *sts.Spec.Replicas)
	}
	c := sts.Spec.Template.Spec.Containers[0]
	for _, flag := range []string{
		"--authentication-kubeconfig=/etc/apiloom/host/kubeconfig", "--authorization-kubeconfig=/etc/apiloom/host/kubeconfig",
		"--kubeconfig=/etc/apiloom/host/kubeconfig", "--tls-cert-file=/etc/apiloom/tls/tls.crt",
		"--tls-private-key-file=/etc/apiloom/tls/tls.key", "--data-dir=/var/lib/apiloom",
		"--bind-address=0.0.0.0", "--secure-port=8443",
	} {
		if !slices.Contains(c.Args, flag) {
			t.Errorf("the server's args lack %s: %v", flag, c.Args)
		}
	}
	if sum := sha256.Sum256(only[*corev1.Secret](t, d, "Secret").Data["tls.crt"]); sts.Spec.Template.Annotations["checksum/serving-cert"] != hex.EncodeToString(sum[:]) {
		t.Errorf("the pod template's checksum/serving-cert is not the Secret's certificate's: a new one would not roll the pod")
	}
	if c.Image != "shop:dev" {
		t.Errorf("image %q", c.Image)
	}
	mounts := map[string]string{} // path: volume
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range sts.Spec.Template.Spec.Volumes {
		volumes[v.Name] = v
	}
	if v := volumes[mounts["/etc/apiloom/tls"]]; v.Secret == nil || v.Secret.SecretName != "shop-serving-cert" {
		t.Errorf("/etc/apiloom/tls is not the serving Secret: %+v", v)
	}
	if v := volumes[mounts["/etc/apiloom/host"]]; v.ConfigMap == nil || v.ConfigMap.Name != "shop-host-kubeconfig" {
		t.Errorf("/etc/apiloom/host is not the host kubeconfig: %+v", v)
	}
	if len(sts.Spec.VolumeClaimTemplates) != 1 || mounts["/var/lib/apiloom"] != sts.Spec.VolumeClaimTemplates[0].Name {
		t.Errorf("/var/lib/apiloom is not the claim template's volume")
	}
	port := c.Ports[0]
	for path, p := range map[string]*corev1.Probe{"/readyz": c.ReadinessProbe, "/livez": c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != path || p.HTTPGet.Scheme != corev1.URISchemeHTTPS || p.HTTPGet.Port.StrVal != port.Name || port.ContainerPort != 8443 {
			t.Errorf("probe for %s: %+v", path, p)
		}
	}
	sc, psc := c.SecurityContext, sts.Spec.Template.Spec.SecurityContext
	if sc == nil || psc == nil || !*sc.ReadOnlyRootFilesystem || !*psc.RunAsNonRoot || *psc.RunAsUser == 0 || *sc.AllowPrivilegeEscalation {
		t.Errorf("security context %+v, pod's %+v", sc, psc)
	}
	service := only[*corev1.Service](t, d, "Service")
	if sp := service.Spec.Ports[0]; service.Name != "shop" || sp.Port != 443 || sp.TargetPort.StrVal != port.Name {
		t.Errorf("service %s: %+v", service.Name, service.Spec.Ports)
	}
	for k, v := range service.Spec.Selector {
		if sts.Spec.Template.Labels[k] != v {
			t.Errorf("the service selects %s=%s, the pods have %v", k, v, sts.Spec.Template.Labels)
		}
	}
}

// checkHostAccess checks the host kubeconfig and what the ServiceAccount
// may do on the host.
func checkHostAccess(t *testing.T, d *deployed, ns string) {
	t.Helper()
	cm := only[*corev1.ConfigMap](t, d, "ConfigMap")
	kc, err := clientcmd.Load([]byte(cm.Data["kubeconfig"]))
	if err != nil {
		t.Fatalf("the host kubeconfig: %v", err)
	}
	ctx := kc.Contexts[kc.CurrentContext]
	if ctx == nil || kc.Clusters[ctx.Cluster] == nil || kc.AuthInfos[ctx.AuthInfo] == nil {
		t.Fatalf("the host kubeconfig has no current context: %+v", kc)
	}
	cluster, user := kc.Clusters[ctx.Cluster], kc.AuthInfos[ctx.AuthInfo]
	if cluster.Server != "https://kubernetes.default.svc" || cluster.CertificateAuthority != "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt" ||
		user.TokenFile != "/var/run/secrets/kubernetes.io/serviceaccount/token" || user.Token != "" {
		t.Errorf("the host kubeconfig: cluster %+v, user %+v", cluster, user)
	}

	sa := only[*corev1.ServiceAccount](t, d, "ServiceAccount")
	if sts := only[*appsv1.StatefulSet](t, d, "StatefulSet"); sts.Spec.Template.Spec.ServiceAccountName != sa.Name || sa.Namespace != ns {
		t.Errorf("the pods run as %s, the ServiceAccount is %s/%s", sts.Spec.Template.Spec.ServiceAccountName, sa.Namespace, sa.Name)
	}
	bound := map[string]bool{} // kind/name of each role bound to the ServiceAccount
	for _, o := range append(d.objects["ClusterRoleBinding"], d.objects["RoleBinding"]...) {
		var ref rbacv1.RoleRef
		var subjects []rbacv1.Subject
		var where string
		switch b := o.(type) {
		case *rbacv1.ClusterRoleBinding:
			ref, subjects = b.RoleRef, b.Subjects
		case *rbacv1.RoleBinding:
			ref, subjects, where = b.RoleRef, b.Subjects, b.Namespace+"/"
		}
		if len(subjects) == 1 && subjects[0].Kind == "ServiceAccount" && subjects[0].Name == sa.Name && subjects[0].Namespace == ns {
			bound[where+ref.Kind+"/"+ref.Name] = true
		}
	}
	for _, want := range []string{"ClusterRole/system:auth-delegator", "kube-system/Role/extension-apiserver-authentication-reader", "ClusterRole/shop:host-reader"} {
		if !bound[want] {
			t.Errorf("the ServiceAccount is not bound to %s (bound: %v)", want, bound)
		}
	}
	aggregated := map[string]string{} // name: aggregate-to labels
	for _, o := range d.objects["ClusterRole"] {
		cr := o.(*rbacv1.ClusterRole)
		if cr.Name == "shop:host-reader" {
			if r := cr.Rules; len(r) != 2 || !slices.Equal(r[0].Resources, []string{"namespaces"}) || !slices.Equal(r[0].Verbs, []string{"get", "list", "watch"}) ||
				r[1].APIGroups[0] != "admissionregistration.k8s.io" || len(r[1].Resources) != 6 || !slices.Equal(r[1].Verbs, []string{"get", "list", "watch"}) {
				t.Errorf("shop:host-reader: %+v", r)
			}
			continue
		}
		var to []string
		for k := range cr.Labels {
			if after, ok := strings.CutPrefix(k, "rbac.authorization.k8s.io/aggregate-to-"); ok {
				to = append(to, after)
			}
		}
		slices.Sort(to)
		aggregated[cr.Name+" "+strings.Join(cr.Rules[0].APIGroups, ",")] = strings.Join(to, ",")
	}
	if want := map[string]string{
		"shop.example.com:edit shop.example.com": "admin,edit", "shop.example.com:view shop.example.com": "view",
		"billing.example.com:edit billing.example.com": "admin,edit", "billing.example.com:view billing.example.com": "view",
	}; !maps.Equal(aggregated, want) {
		t.Errorf("aggregated roles %v, want %v", aggregated, want)
	}
}

func parseCert(t *testing.T, data []byte) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode(data)
	if b == nil || b.Type != "CERTIFICATE" {
		t.Fatalf("not a PEM certificate:\n%s", data)
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// str is the value at path in m as a string ("" if there is none).
func str(t *testing.T, m map[string]any, path ...string) string {
	t.Helper()
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = mm[k]
	}
	if v == nil {
		return ""
	}
	b, _ := yaml.Marshal(v)
	return strings.TrimSpace(string(b))
}

func readFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
