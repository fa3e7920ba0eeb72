package helm

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// releaseRecord is what one of Helm's release Secrets
// (sh.helm.release.v1.<name>.v<revision>) says, in its labels and in the
// release it stores.
type releaseRecord struct {
	Revision    int
	LabelStatus string // the label status=
	Status      string // the stored release's info.status
}

// releaseRecords reads release's records in the namespace from the
// server, by revision. Each must be a Secret of type helm.sh/release.v1
// named after its revision with the labels Helm's Secret driver writes,
// and store the release of that name and revision.
func (c *checker) releaseRecords(t *testing.T, release string) map[int]releaseRecord {
	t.Helper()
	list, err := c.kube.CoreV1().Secrets(c.namespace).List(t.Context(), metav1.ListOptions{LabelSelector: "owner=helm,name=" + release})
	if err != nil {
		t.Fatalf("list release records: %v", err)
	}
	records := map[int]releaseRecord{}
	for i := range list.Items {
		s := &list.Items[i]
		rev, err := strconv.Atoi(s.Labels["version"])
		if err != nil {
			t.Fatalf("release record %s: label version=%q", s.Name, s.Labels["version"])
		}
		if want := fmt.Sprintf("sh.helm.release.v1.%s.v%d", release, rev); s.Name != want {
			t.Errorf("release record %s: want the name %s", s.Name, want)
		}
		if s.Type != "helm.sh/release.v1" {
			t.Errorf("release record %s: type %q, want helm.sh/release.v1", s.Name, s.Type)
		}
		stored := decodeRelease(t, s)
		if stored.Name != release || stored.Version != rev || stored.Namespace != c.namespace {
			t.Errorf("release record %s stores release %s/%s revision %d", s.Name, stored.Namespace, stored.Name, stored.Version)
		}
		records[rev] = releaseRecord{Revision: rev, LabelStatus: s.Labels["status"], Status: stored.Info.Status}
	}
	return records
}

// storedRelease is the part of Helm's release (helm.sh/helm/v3/pkg/release,
// v4's pkg/release/v1) the test reads.
type storedRelease struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Version   int    `json:"version"`
	Info      struct {
		Status string `json:"status"`
	} `json:"info"`
}

// decodeRelease reads the release a record stores: data.release is the
// release's JSON, gzipped and then base64-encoded (once more than the
// Secret's own encoding), as Helm's storage drivers write it.
func decodeRelease(t *testing.T, s *corev1.Secret) storedRelease {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(string(s.Data["release"]))
	if err != nil {
		t.Fatalf("release record %s: data.release: %v", s.Name, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("release record %s: data.release: %v", s.Name, err)
	}
	js, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("release record %s: data.release: %v", s.Name, err)
	}
	var r storedRelease
	if err := json.Unmarshal(js, &r); err != nil {
		t.Fatalf("release record %s: data.release: %v", s.Name, err)
	}
	return r
}

// expectRecords checks that release's records on the server are exactly
// want (revision → status), in their labels and in the releases they store.
func (c *checker) expectRecords(t *testing.T, release string, want map[int]string) {
	t.Helper()
	got := c.releaseRecords(t, release)
	if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))) {
		t.Errorf("release %s: records of revisions %v, want %v (%+v)", release, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)), got)
	}
	for rev, status := range want {
		r, ok := got[rev]
		if !ok {
			continue
		}
		if r.LabelStatus != status || r.Status != status {
			t.Errorf("release %s revision %d: label status=%s, stored status %s; want %s", release, rev, r.LabelStatus, r.Status, status)
		}
	}
}
