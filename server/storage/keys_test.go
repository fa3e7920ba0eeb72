package storage

import (
	"errors"
	"testing"

	"github.com/apiloom/apiloom/server/resource"
)

func TestKey(t *testing.T) {
	if got := Key("ns", "a"); got != "ns/a" {
		t.Errorf("Key(ns, a) = %q", got)
	}
	if got := Key("", "a"); got != "a" {
		t.Errorf(`Key("", a) = %q`, got)
	}
}

func TestResourcePrefix(t *testing.T) {
	db := &resource.Info{Group: "example.apiloom.dev", Plural: "databases"}
	core := &resource.Info{Plural: "widgets"}
	for _, tc := range []struct {
		root string
		info *resource.Info
		want string
	}{
		{"/registry", db, "/registry/example.apiloom.dev/databases/"},
		{"/registry/", db, "/registry/example.apiloom.dev/databases/"},
		{"/registry", core, "/registry/widgets/"},
		{"", db, "/example.apiloom.dev/databases/"},
	} {
		if got := ResourcePrefix(tc.root, tc.info); got != tc.want {
			t.Errorf("ResourcePrefix(%q, %s) = %q, want %q", tc.root, tc.info.Plural, got, tc.want)
		}
	}
}

func TestValidKey(t *testing.T) {
	for _, tc := range []struct {
		key        string
		namespaced bool
		ok         bool
	}{
		{"ns/a", true, true},
		{"a", false, true},
		{"a", true, false},
		{"ns/a", false, false},
		{"", false, false},
		{"ns/a/b", true, false},
		{"ns/", true, false},
		{"/a", true, false},
		{"ns/..", true, false},
		{"..", false, false},
		{".", false, false},
		{"a\x00", false, false},
		{"a..b", false, true},
	} {
		if got := validKey(tc.key, tc.namespaced); got != tc.ok {
			t.Errorf("validKey(%q, namespaced=%v) = %v", tc.key, tc.namespaced, got)
		}
	}
}

func TestParseResourceVersion(t *testing.T) {
	for in, want := range map[string]int64{"": 0, "0": 0, "17": 17} {
		if got, err := ParseResourceVersion(in); err != nil || got != want {
			t.Errorf("ParseResourceVersion(%q) = %d, %v", in, got, err)
		}
	}
	for _, in := range []string{"-1", "x", "1.5", " 1", "99999999999999999999"} {
		if _, err := ParseResourceVersion(in); !errors.Is(err, ErrInvalidResourceVersion) {
			t.Errorf("ParseResourceVersion(%q): %v, want ErrInvalidResourceVersion", in, err)
		}
	}
}
