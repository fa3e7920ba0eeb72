package storage

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func TestContinueRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		start string
		rev   int64
	}{
		{"ns/name\x00", 42},
		{"name\x00", 1},
		{"ns/a..b\x00", 7}, // ".." inside a name is not a path segment
		{"ns/name\x00", -1},
	} {
		token := EncodeContinue(tc.start, tc.rev)
		start, rev, err := DecodeContinue(token)
		if err != nil || start != tc.start || rev != tc.rev {
			t.Errorf("round trip of (%q, %d): (%q, %d, %v)", tc.start, tc.rev, start, rev, err)
		}
	}
}

// TestContinueWireFormat pins the token format to kube-apiserver's, so a
// token from either server means the same thing.
func TestContinueWireFormat(t *testing.T) {
	token := ContinueAfter("ns/name", 1234)
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"v":"meta.k8s.io/v1","rv":1234,"start":"ns/name\u0000"}`; string(data) != want {
		t.Errorf("token JSON %s, want %s", data, want)
	}
}

func TestDecodeContinueRejects(t *testing.T) {
	raw := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for name, token := range map[string]string{
		"not base64":     "%%%",
		"padded base64":  base64.URLEncoding.EncodeToString([]byte(`{"v":"meta.k8s.io/v1","rv":1,"start":"a"}`)),
		"not json":       raw("hello"),
		"wrong version":  raw(`{"v":"meta.k8s.io/v2","rv":1,"start":"a"}`),
		"no version":     raw(`{"rv":1,"start":"a"}`),
		"zero rv":        raw(`{"v":"meta.k8s.io/v1","rv":0,"start":"a"}`),
		"no start":       raw(`{"v":"meta.k8s.io/v1","rv":1}`),
		"dot dot":        EncodeContinue("../other\x00", 1),
		"inner dot dot":  EncodeContinue("ns/../../x\x00", 1),
		"dot dot nul":    EncodeContinue("ns/..\x00", 1),
		"dot":            EncodeContinue("./x", 1),
		"absolute":       EncodeContinue("/registry/secrets/x", 1),
		"double slash":   EncodeContinue("ns//x", 1),
		"trailing slash": EncodeContinue("ns/", 1),
		"rv not number":  raw(`{"v":"meta.k8s.io/v1","rv":"5","start":"a"}`),
	} {
		_, _, err := DecodeContinue(token)
		if !errors.Is(err, ErrInvalidContinue) {
			t.Errorf("%s (%q): %v, want ErrInvalidContinue", name, token, err)
		}
	}
}

func FuzzDecodeContinue(f *testing.F) {
	f.Add(EncodeContinue("ns/name\x00", 5))
	f.Add(EncodeContinue("name\x00", -1))
	f.Add(EncodeContinue("../x", 1))
	f.Add("")
	f.Add("eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ")
	f.Fuzz(func(t *testing.T, token string) {
		start, rev, err := DecodeContinue(token)
		if err != nil {
			if !errors.Is(err, ErrInvalidContinue) {
				t.Fatalf("error %v does not wrap ErrInvalidContinue", err)
			}
			return
		}
		// Whatever decodes stays inside the resource prefix and survives
		// a round trip.
		if rev == 0 || start == "" || strings.HasPrefix(start, "/") || !cleanRelativeKey(start) {
			t.Fatalf("accepted (%q, %d)", start, rev)
		}
		for seg := range strings.SplitSeq(start, "/") {
			if s := strings.TrimRight(seg, "\x00"); s == ".." || s == "." {
				t.Fatalf("accepted start %q with a %q segment", start, s)
			}
		}
		start2, rev2, err := DecodeContinue(EncodeContinue(start, rev))
		if err != nil || start2 != start || rev2 != rev {
			t.Fatalf("re-encoding (%q, %d) gave (%q, %d, %v)", start, rev, start2, rev2, err)
		}
	})
}
