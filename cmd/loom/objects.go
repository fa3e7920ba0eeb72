package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// deployment is what loom manifests writes deploy/ from.
type deployment struct {
	// Name names the Service, the StatefulSet, the ServiceAccount and
	// prefixes every other object's name.
	Name, Namespace string
	Image           string
	StorageSize     resource.Quantity
	GroupVersions   []groupVersion
	PKI             *servingPKI
}

// groupVersion is one group version of the module's apis/.
type groupVersion struct {
	Group, Version string
	// Preferred is the version the server's discovery lists first for
	// its group.
	Preferred bool
}

// Where the server finds what the Deployment mounts, and where it serves:
// the flags of its aggregated mode.
const (
	dataDir          = "/var/lib/apiloom"
	hostKubeconfig   = "/etc/apiloom/host/kubeconfig"
	tlsDir           = "/etc/apiloom/tls"
	servingPort      = 8443
	serviceAccountSA = "/var/run/secrets/kubernetes.io/serviceaccount"
)

// The APIServices' priorities: groupPriorityMinimum orders the groups in
// the host's discovery (1000 puts them after the built-in ones, which
// have 16000 and more); versionPriority orders a group's versions, the
// preferred one first, the rest by Kubernetes' version order as the
// server's own discovery does.
const (
	groupPriorityMinimum     = 1000
	versionPriority          = 15
	preferredVersionPriority = 20
	hostAuthenticationReader = "extension-apiserver-authentication-reader"
	hostAuthDelegator        = "system:auth-delegator"
	aggregateLabelPrefix     = "rbac.authorization.k8s.io/aggregate-to-"
)

// dnsNames are the names the aggregator dials the Service by.
func (d *deployment) dnsNames() []string {
	return []string{
		d.Name + "." + d.Namespace + ".svc",
		d.Name + "." + d.Namespace + ".svc.cluster.local",
	}
}

func (d *deployment) labels() map[string]string {
	return map[string]string{"app.kubernetes.io/name": d.Name, "app.kubernetes.io/component": "apiserver"}
}

func (d *deployment) meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: d.Namespace, Labels: d.labels()}
}

func (d *deployment) clusterMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Labels: d.labels()}
}

// manifest is one file of deploy/: a comment and its objects.
type manifest struct {
	path    string
	comment string
	objects []any
	// secret: the file holds a private key; it is written readable by
	// its owner only and not committed.
	secret bool
}

const (
	// secretManifest is the path of the Secret's file, in .gitignore.
	secretManifest = "deploy/40-serving-cert.yaml"
	// apiServicesManifest is the path of the APIServices' file.
	apiServicesManifest = "deploy/70-apiservices.yaml"
)

// manifests returns deploy/'s files, numbered in the order kubectl apply
// -f deploy/ must create them: the namespace first.
func (d *deployment) manifests() ([]file, error) {
	ms := []manifest{
		{path: "deploy/00-namespace.yaml", objects: []any{&corev1.Namespace{
			TypeMeta: typeMeta("v1", "Namespace"), ObjectMeta: d.clusterMeta(d.Namespace),
		}}},
		{path: "deploy/10-serviceaccount.yaml", comment: serviceAccountComment,
			objects: []any{&corev1.ServiceAccount{TypeMeta: typeMeta("v1", "ServiceAccount"), ObjectMeta: d.meta(d.Name)}}},
		{path: "deploy/20-rbac.yaml", comment: rbacComment, objects: d.serverRBAC()},
		{path: "deploy/25-rbac-aggregated.yaml", comment: aggregatedComment, objects: d.aggregatedRoles()},
		{path: "deploy/30-host-kubeconfig.yaml", comment: kubeconfigComment, objects: []any{d.hostKubeconfig()}},
		{path: secretManifest, comment: secretComment, objects: []any{d.servingSecret()}, secret: true},
		{path: "deploy/50-statefulset.yaml", comment: statefulSetComment, objects: []any{d.statefulSet()}},
		{path: "deploy/60-service.yaml", objects: []any{d.service()}},
		{path: apiServicesManifest, comment: apiServiceComment, objects: d.apiServices()},
	}
	var files []file
	for _, m := range ms {
		var b bytes.Buffer
		b.WriteString("# Written by loom manifests (go tool loom manifests, make manifests): edit the\n" +
			"# flags or loom, not this file, which the next run writes over.\n")
		if m.comment != "" {
			b.WriteString("#\n")
			for _, line := range bytes.Split([]byte(m.comment), []byte("\n")) {
				b.WriteString("# ")
				b.Write(line)
				b.WriteString("\n")
			}
		}
		for _, o := range m.objects {
			y, err := toYAML(o)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", m.path, err)
			}
			b.WriteString("---\n")
			b.Write(y)
		}
		files = append(files, file{path: m.path, data: b.Bytes(), private: m.secret})
	}
	return files, nil
}

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

// toYAML is obj as YAML without what a typed object carries that a
// manifest should not: a status, a null creationTimestamp.
func toYAML(obj any) ([]byte, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	prune(u, true)
	return yaml.Marshal(u)
}

// prune drops null values, and an object's status (at the top, or of a
// StatefulSet's claim templates).
func prune(m map[string]any, object bool) {
	if object {
		delete(m, "status")
	}
	for k, v := range m {
		switch v := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			prune(v, false)
		case []any:
			for _, item := range v {
				if im, ok := item.(map[string]any); ok {
					prune(im, k == "volumeClaimTemplates")
				}
			}
		}
	}
}

const serviceAccountComment = `The server's identity on the host: the token it reviews the requests'
tokens and access with (20-rbac.yaml says what it may do).`

const rbacComment = `What the server needs of the host: to review the tokens and the access of
the requests the aggregator passes it (system:auth-delegator: TokenReviews,
SubjectAccessReviews), to read the aggregator's client CA and the names of its
headers (kube-system/extension-apiserver-authentication), and to see the
host's namespaces, where its namespaced objects live.`

func (d *deployment) serverRBAC() []any {
	sa := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: d.Name, Namespace: d.Namespace}}
	reader := d.Name + ":host-reader"
	return []any{
		&rbacv1.ClusterRoleBinding{
			TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
			ObjectMeta: d.clusterMeta(d.Name + ":" + hostAuthDelegator),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: hostAuthDelegator},
			Subjects:   sa,
		},
		&rbacv1.RoleBinding{
			TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "RoleBinding"),
			ObjectMeta: metav1.ObjectMeta{
				Name: d.Name + ":" + hostAuthenticationReader, Namespace: metav1.NamespaceSystem, Labels: d.labels(),
			},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: hostAuthenticationReader},
			Subjects: sa,
		},
		&rbacv1.ClusterRole{
			TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "ClusterRole"),
			ObjectMeta: d.clusterMeta(reader),
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch"},
			}, {
				// The host's policies and webhooks apply to this server's
				// writes; a policy's parameters need their own grant.
				APIGroups: []string{"admissionregistration.k8s.io"}, Verbs: []string{"get", "list", "watch"},
				Resources: []string{"validatingadmissionpolicies", "validatingadmissionpolicybindings",
					"mutatingadmissionpolicies", "mutatingadmissionpolicybindings",
					"validatingwebhookconfigurations", "mutatingwebhookconfigurations"},
			}},
		},
		&rbacv1.ClusterRoleBinding{
			TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
			ObjectMeta: d.clusterMeta(reader),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: reader},
			Subjects:   sa,
		},
	}
}

const aggregatedComment = `The host's users get this module's kinds as they get a CRD's: each group's
<group>:edit role is aggregated into the host's admin and edit roles, its
<group>:view role into view (and, through view, edit and admin). The server
asks the host (SubjectAccessReview) whether a user may, so these roles, and
any of your own naming these groups, decide.`

func (d *deployment) aggregatedRoles() []any {
	var out []any
	seen := map[string]bool{}
	for _, gv := range d.GroupVersions {
		if seen[gv.Group] {
			continue
		}
		seen[gv.Group] = true
		for _, r := range []struct {
			suffix string
			verbs  []string
			to     []string
		}{
			{"edit", []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}, []string{"admin", "edit"}},
			{"view", []string{"get", "list", "watch"}, []string{"view"}},
		} {
			meta := d.clusterMeta(gv.Group + ":" + r.suffix)
			for _, to := range r.to {
				meta.Labels[aggregateLabelPrefix+to] = "true"
			}
			out = append(out, &rbacv1.ClusterRole{
				TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "ClusterRole"),
				ObjectMeta: meta,
				Rules:      []rbacv1.PolicyRule{{APIGroups: []string{gv.Group}, Resources: []string{"*"}, Verbs: r.verbs}},
			})
		}
	}
	return out
}

const kubeconfigComment = `The server's kubeconfig for the host (its --kubeconfig, and the reviews'
--authentication-kubeconfig and --authorization-kubeconfig): the in-cluster
API with the pod's ServiceAccount token, read from its file on every request
so that the kubelet's rotation of the projected token is seen.`

func (d *deployment) hostKubeconfig() *corev1.ConfigMap {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["host"] = &clientcmdapi.Cluster{
		Server: "https://kubernetes.default.svc", CertificateAuthority: serviceAccountSA + "/ca.crt",
	}
	cfg.AuthInfos["serviceaccount"] = &clientcmdapi.AuthInfo{TokenFile: serviceAccountSA + "/token"}
	cfg.Contexts["host"] = &clientcmdapi.Context{Cluster: "host", AuthInfo: "serviceaccount", Namespace: d.Namespace}
	cfg.CurrentContext = "host"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		panic(err) // a Config built here always serializes
	}
	return &corev1.ConfigMap{
		TypeMeta: typeMeta("v1", "ConfigMap"), ObjectMeta: d.meta(d.Name + "-host-kubeconfig"),
		Data: map[string]string{"kubeconfig": string(data)},
	}
}

const secretComment = `The server's serving certificate, for the Service's names, signed by the CA
in deploy/pki/ that the APIServices' caBundle carries. It holds a private
key: it and deploy/pki/ are in .gitignore. loom manifests reuses them while
they fit the names and are more than 30 days from their end.`

func (d *deployment) servingSecret() *corev1.Secret {
	return &corev1.Secret{
		TypeMeta: typeMeta("v1", "Secret"), ObjectMeta: d.meta(d.Name + "-serving-cert"),
		Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: d.PKI.ServingCert, corev1.TLSPrivateKeyKey: d.PKI.Key},
	}
}

const statefulSetComment = `The server, with an embedded etcd on a PersistentVolumeClaim: one replica
and no dependency outside the cluster, etcd fsyncing to a volume of its
own. For several replicas, give it an external etcd (--etcd-servers) or
kine on PostgreSQL instead, drop the claim and --data-dir's volume, and
raise replicas (or make it a Deployment).`

func (d *deployment) statefulSet() *appsv1.StatefulSet {
	args := []string{
		"--authentication-kubeconfig=" + hostKubeconfig,
		"--authorization-kubeconfig=" + hostKubeconfig,
		"--kubeconfig=" + hostKubeconfig,
		"--tls-cert-file=" + tlsDir + "/" + corev1.TLSCertKey,
		"--tls-private-key-file=" + tlsDir + "/" + corev1.TLSPrivateKeyKey,
		"--data-dir=" + dataDir,
		"--bind-address=0.0.0.0",
		fmt.Sprintf("--secure-port=%d", servingPort),
	}
	probe := func(path string, period, failures int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: path, Port: intstr.FromString("https"), Scheme: corev1.URISchemeHTTPS,
			}},
			PeriodSeconds: period, FailureThreshold: failures, TimeoutSeconds: 5,
		}
	}
	nonRoot := int64(65532) // distroless's nonroot user
	return &appsv1.StatefulSet{
		TypeMeta:   typeMeta("apps/v1", "StatefulSet"),
		ObjectMeta: d.meta(d.Name),
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To[int32](1),
			ServiceName: d.Name,
			Selector:    &metav1.LabelSelector{MatchLabels: d.labels()},
			Template: corev1.PodTemplateSpec{
				// A new certificate (a re-run near its end, another
				// namespace) rolls the pod, which reads it at start.
				ObjectMeta: metav1.ObjectMeta{Labels: d.labels(), Annotations: map[string]string{
					"checksum/serving-cert": fmt.Sprintf("%x", sha256.Sum256(d.PKI.ServingCert)),
				}},
				Spec: corev1.PodSpec{
					ServiceAccountName:           d.Name,
					AutomountServiceAccountToken: ptr.To(true), // the host kubeconfig's token and CA
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot: ptr.To(true), RunAsUser: &nonRoot, RunAsGroup: &nonRoot,
						FSGroup:             &nonRoot, // the data volume writable by the server
						FSGroupChangePolicy: ptr.To(corev1.FSGroupChangeOnRootMismatch),
						SeccompProfile:      &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:  "apiserver",
						Image: d.Image,
						Args:  args,
						Ports: []corev1.ContainerPort{{Name: "https", ContainerPort: servingPort, Protocol: corev1.ProtocolTCP}},
						// etcd replays its log before the server answers:
						// up to five minutes before liveness counts.
						StartupProbe:   probe("/livez", 5, 60),
						LivenessProbe:  probe("/livez", 10, 3),
						ReadinessProbe: probe("/readyz", 5, 3),
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("256Mi"),
						}},
						SecurityContext: &corev1.SecurityContext{
							RunAsNonRoot: ptr.To(true), ReadOnlyRootFilesystem: ptr.To(true),
							AllowPrivilegeEscalation: ptr.To(false),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
						VolumeMounts: []corev1.VolumeMount{
							{Name: "data", MountPath: dataDir},
							{Name: "host-kubeconfig", MountPath: "/etc/apiloom/host", ReadOnly: true},
							{Name: "serving-cert", MountPath: tlsDir, ReadOnly: true},
							{Name: "tmp", MountPath: "/tmp"}, // the root filesystem is read-only
						},
					}},
					Volumes: []corev1.Volume{
						{Name: "host-kubeconfig", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: d.Name + "-host-kubeconfig"},
						}}},
						{Name: "serving-cert", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
							SecretName: d.Name + "-serving-cert",
						}}},
						{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					},
				},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				TypeMeta:   typeMeta("v1", "PersistentVolumeClaim"),
				ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: d.labels()},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceStorage: d.StorageSize,
					}},
				},
			}},
		},
	}
}

func (d *deployment) service() *corev1.Service {
	return &corev1.Service{
		TypeMeta: typeMeta("v1", "Service"), ObjectMeta: d.meta(d.Name),
		Spec: corev1.ServiceSpec{
			Selector: d.labels(),
			Ports: []corev1.ServicePort{{
				Name: "https", Port: 443, TargetPort: intstr.FromString("https"), Protocol: corev1.ProtocolTCP,
			}},
		},
	}
}

const apiServiceComment = `One APIService per group version of apis/: the host's aggregator proxies
/apis/<group>/<version> to the Service, verifying its certificate with
caBundle (the CA in deploy/pki/). loom manifests writes one for each
group version it finds, so run it again after loom create api adds one.`

// apiService is apiregistration.k8s.io/v1's APIService, the fields loom
// writes: a local type, so that loom needs no k8s.io/kube-aggregator.
type apiService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              apiServiceSpec `json:"spec"`
}

type apiServiceSpec struct {
	Service               *apiServiceReference `json:"service"`
	Group                 string               `json:"group"`
	Version               string               `json:"version"`
	InsecureSkipTLSVerify bool                 `json:"insecureSkipTLSVerify"`
	CABundle              []byte               `json:"caBundle"`
	GroupPriorityMinimum  int32                `json:"groupPriorityMinimum"`
	VersionPriority       int32                `json:"versionPriority"`
}

type apiServiceReference struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Port      int32  `json:"port"`
}

func (d *deployment) apiServices() []any {
	var out []any
	for _, gv := range d.GroupVersions {
		priority := int32(versionPriority)
		if gv.Preferred {
			priority = preferredVersionPriority
		}
		out = append(out, &apiService{
			TypeMeta:   typeMeta("apiregistration.k8s.io/v1", "APIService"),
			ObjectMeta: d.clusterMeta(gv.Version + "." + gv.Group),
			Spec: apiServiceSpec{
				Service:              &apiServiceReference{Namespace: d.Namespace, Name: d.Name, Port: 443},
				Group:                gv.Group,
				Version:              gv.Version,
				CABundle:             d.PKI.CACert,
				GroupPriorityMinimum: groupPriorityMinimum,
				VersionPriority:      priority,
			},
		})
	}
	return out
}
