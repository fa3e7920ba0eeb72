package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/apiloom/apiloom/server/testserver"
)

// TestServiceAccountKubectl: a new namespace gets its default
// ServiceAccount and kube-root-ca.crt; `kubectl create token` gives a
// token that lists what RBAC allows its ServiceAccount, whose exp claim is
// the duration asked for, that verifies against the published JWKS with
// go-jose, and that stops working once the ServiceAccount is deleted.
func TestServiceAccountKubectl(t *testing.T) {
	ts, _ := startServer(t, testserver.WithControllers("*"))
	k := kubectlFor(t, ts)
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := t.Context()
	const ns = "sa-e2e"
	k.run("create", "namespace", ns)

	eventually(t, "default ServiceAccount and kube-root-ca.crt", func(ctx context.Context) (bool, error) {
		if _, err := kc.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); apierrors.IsNotFound(err) {
			return false, nil
		}
		cm, err := kc.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil && cm.Data["ca.crt"] == string(ts.Server.CAPEM()) && cm.Annotations["kubernetes.io/description"] != "", err
	})

	k.run("create", "serviceaccount", "robot", "-n", ns)
	if out := k.run("get", "sa", "-n", ns); !strings.Contains(out, "robot") || !strings.Contains(out, "default") {
		t.Fatalf("kubectl get sa:\n%s", out)
	}
	tok := strings.TrimSpace(k.run("create", "token", "robot", "-n", ns, "--duration=15m"))
	robot := kubernetes.NewForConfigOrDie(&rest.Config{Host: ts.Config.Host, BearerToken: tok,
		TLSClientConfig: rest.TLSClientConfig{CAData: ts.Server.CAPEM()}, QPS: -1})

	if _, err := robot.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("list before any binding: %v, want Forbidden", err)
	}
	k.run("create", "rolebinding", "robot-view", "--clusterrole=view", "--serviceaccount="+ns+":robot", "-n", ns)
	eventually(t, "the ServiceAccount lists ConfigMaps", func(ctx context.Context) (bool, error) {
		l, err := robot.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if apierrors.IsForbidden(err) {
			return false, nil
		}
		return err == nil && len(l.Items) == 1, err
	})
	if _, err := robot.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("list in another namespace: %v, want Forbidden", err)
	}

	// A relying party: the discovery document and the JWKS (served to
	// ServiceAccounts by system:service-account-issuer-discovery).
	rawConfig, err := robot.RESTClient().Get().AbsPath("/.well-known/openid-configuration").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var config struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := json.Unmarshal(rawConfig, &config); err != nil || config.Issuer != "https://kubernetes.default.svc" ||
		config.JWKSURI != "https://kubernetes.default.svc/openid/v1/jwks" {
		t.Fatalf("discovery document %s: %v", rawConfig, err)
	}
	rawJWKS, err := robot.RESTClient().Get().AbsPath("/openid/v1/jwks").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(rawJWKS, &set); err != nil {
		t.Fatal(err)
	}
	parsed, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.RS256, jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	keys := set.Key(parsed.Headers[0].KeyID)
	if len(keys) != 1 {
		t.Fatalf("the JWKS has no key %q: %s", parsed.Headers[0].KeyID, rawJWKS)
	}
	var claims jwt.Claims
	var private struct {
		K struct {
			Namespace string `json:"namespace"`
			SA        struct {
				Name string `json:"name"`
				UID  string `json:"uid"`
			} `json:"serviceaccount"`
		} `json:"kubernetes.io"`
	}
	if err := parsed.Claims(keys[0].Key, &claims, &private); err != nil {
		t.Fatalf("token does not verify with the published key: %v", err)
	}
	if err := claims.Validate(jwt.Expected{Issuer: config.Issuer, AnyAudience: jwt.Audience{config.Issuer},
		Subject: "system:serviceaccount:" + ns + ":robot", Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if life := claims.Expiry.Time().Sub(claims.IssuedAt.Time()); life != 15*time.Minute {
		t.Fatalf("token lives %v, asked for 15m", life)
	}
	if private.K.Namespace != ns || private.K.SA.Name != "robot" || private.K.SA.UID == "" {
		t.Fatalf("kubernetes.io claims %+v", private.K)
	}

	k.run("delete", "serviceaccount", "robot", "-n", ns)
	eventually(t, "the deleted ServiceAccount's token refused", func(ctx context.Context) (bool, error) {
		_, err := robot.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		return apierrors.IsUnauthorized(err), nil
	})

	// Deleted, the default ServiceAccount and the ConfigMap come back.
	k.run("delete", "serviceaccount", "default", "-n", ns)
	k.run("delete", "configmap", "kube-root-ca.crt", "-n", ns)
	eventually(t, "default ServiceAccount and kube-root-ca.crt back", func(ctx context.Context) (bool, error) {
		_, err1 := kc.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		_, err2 := kc.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err1 == nil && err2 == nil, nil
	})
}

// TestTokenRequest: the TokenRequest API's rules as upstream's: the
// default expiry and audiences, the 10-minute minimum, Secrets as the one
// kind a token can be bound to (a Pod is not served), and a bound token
// refused once its Secret is gone.
func TestTokenRequest(t *testing.T) {
	ts, _ := startServer(t)
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := t.Context()
	sa, err := kc.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "bot"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tokens := kc.CoreV1().ServiceAccounts("default")

	tr, err := tokens.CreateToken(ctx, "bot", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *tr.Spec.ExpirationSeconds != 3600 || len(tr.Spec.Audiences) != 1 || tr.Spec.Audiences[0] != "https://kubernetes.default.svc" || tr.UID != sa.UID {
		t.Fatalf("defaults: %+v", tr.Spec)
	}
	if left := time.Until(tr.Status.ExpirationTimestamp.Time); left < 59*time.Minute || left > time.Hour {
		t.Fatalf("expires in %v", left)
	}

	short := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](599)}}
	if _, err := tokens.CreateToken(ctx, "bot", short, metav1.CreateOptions{}); !apierrors.IsInvalid(err) ||
		!strings.Contains(err.Error(), "may not specify a duration less than 10 minutes") {
		t.Fatalf("599s: %v", err)
	}
	pod := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "p"}}}
	if _, err := tokens.CreateToken(ctx, "bot", pod, metav1.CreateOptions{}); !apierrors.IsBadRequest(err) {
		t.Fatalf("bound to a Pod: %v, want BadRequest", err)
	}
	if _, err := tokens.CreateToken(ctx, "nobody", &authenticationv1.TokenRequest{}, metav1.CreateOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("no such ServiceAccount: %v", err)
	}

	secret, err := kc.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "anchor"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bound := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: "anchor", UID: secret.UID}}}
	tr, err = tokens.CreateToken(ctx, "bot", bound, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bot := kubernetes.NewForConfigOrDie(&rest.Config{Host: ts.Config.Host, BearerToken: tr.Status.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: ts.Server.CAPEM()}, QPS: -1})
	review, err := bot.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || review.Status.UserInfo.Username != "system:serviceaccount:default:bot" {
		t.Fatalf("whoami with the bound token: %v %+v", err, review)
	}
	if err := kc.CoreV1().Secrets("default").Delete(ctx, "anchor", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the token bound to the deleted Secret refused", func(ctx context.Context) (bool, error) {
		_, err := bot.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		return apierrors.IsUnauthorized(err), nil
	})
}
