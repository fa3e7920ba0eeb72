package strategy

import (
	"encoding/json"
	"testing"
)

func mustJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return normalizeNumbers(m).(map[string]any)
}

// normalizeNumbers makes JSON's float64 integers int64, as a typed
// object's conversion has them.
func normalizeNumbers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = normalizeNumbers(x)
		}
	case []any:
		for i, x := range v {
			v[i] = normalizeNumbers(x)
		}
	case float64:
		if v == float64(int64(v)) {
			return int64(v)
		}
	}
	return v
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestWithChanges: what a hook changed of the typed object reaches the
// request's content, and nothing else does: a field the request left
// out, which the typed object holds as a zero, stays out.
func TestWithChanges(t *testing.T) {
	for _, c := range []struct{ name, content, before, after, want string }{
		{"no change keeps the absence",
			`{"spec":{"size":1}}`, `{"spec":{"size":1,"title":""}}`, `{"spec":{"size":1,"title":""}}`,
			`{"spec":{"size":1}}`},
		{"a field the hook sets is present",
			`{"spec":{"size":1}}`, `{"spec":{"size":1,"title":""}}`, `{"spec":{"size":1,"title":"set"}}`,
			`{"spec":{"size":1,"title":"set"}}`},
		{"a field the hook removes is gone",
			`{"spec":{"size":1,"tag":"x"}}`, `{"spec":{"size":1,"tag":"x","title":""}}`, `{"spec":{"size":1,"title":""}}`,
			`{"spec":{"size":1}}`},
		{"a new map comes whole",
			`{"spec":{}}`, `{"spec":{"title":""}}`, `{"spec":{"title":"","extra":{"a":"b","z":""}}}`,
			`{"spec":{"extra":{"a":"b","z":""}}}`},
		{"a map the request left out gets only what changed in it",
			`{"spec":{"size":1}}`, `{"spec":{"size":1,"extra":{"a":"","z":""}}}`, `{"spec":{"size":1,"extra":{"a":"x","z":""}}}`,
			`{"spec":{"size":1,"extra":{"a":"x"}}}`},
		{"list items of unchanged length follow by index",
			`{"spec":{"items":[{"name":"a"},{"name":"b"}]}}`,
			`{"spec":{"items":[{"name":"a","port":0},{"name":"b","port":0}]}}`,
			`{"spec":{"items":[{"name":"a","port":0},{"name":"b","port":80}]}}`,
			`{"spec":{"items":[{"name":"a"},{"name":"b","port":80}]}}`},
		{"a list of another length is the hook's",
			`{"spec":{"items":[{"name":"a"}]}}`,
			`{"spec":{"items":[{"name":"a","port":0}]}}`,
			`{"spec":{"items":[{"name":"a","port":0},{"name":"b","port":0}]}}`,
			`{"spec":{"items":[{"name":"a","port":0},{"name":"b","port":0}]}}`},
	} {
		content := mustJSON(t, c.content)
		orig := asJSON(t, content)
		got := withChanges(content, mustJSON(t, c.before), mustJSON(t, c.after))
		if g := asJSON(t, got); g != asJSON(t, mustJSON(t, c.want)) {
			t.Errorf("%s: got %s, want %s", c.name, g, c.want)
		}
		if asJSON(t, content) != orig {
			t.Errorf("%s: content changed to %s", c.name, asJSON(t, content))
		}
	}
}

// TestDropUnwritten: of an apply's merged object, a zero stays only
// where the configuration wrote it or the stored object held it.
func TestDropUnwritten(t *testing.T) {
	for _, c := range []struct{ name, merged, config, old, want string }{
		{"create: zeros the configuration left out go",
			`{"spec":{"owner":"o","engine":"","replicas":0,"on":false,"tags":[],"sub":{"a":""}}}`,
			`{"spec":{"owner":"o"}}`, ``,
			`{"spec":{"owner":"o"}}`},
		{"create: zeros the configuration wrote stay",
			`{"spec":{"owner":"o","engine":"","replicas":0}}`,
			`{"spec":{"owner":"o","engine":"","replicas":0}}`, ``,
			`{"spec":{"owner":"o","engine":"","replicas":0}}`},
		{"metadata is the server's",
			`{"metadata":{"name":"n","namespace":""},"spec":{"owner":"o"}}`, `{"spec":{"owner":"o"}}`, ``,
			`{"metadata":{"name":"n","namespace":""},"spec":{"owner":"o"}}`},
		{"create: an empty object the configuration left out goes",
			`{"spec":{"owner":"o"},"status":{"phase":""}}`, `{"spec":{"owner":"o"}}`, ``,
			`{"spec":{"owner":"o"}}`},
		{"update: a zero the stored object held stays",
			`{"spec":{"owner":"o","engine":""}}`, `{"spec":{"owner":"o"}}`, `{"spec":{"owner":"o","engine":""}}`,
			`{"spec":{"owner":"o","engine":""}}`},
		{"update: a field the merge removed is missing",
			`{"spec":{"owner":"o","engine":""}}`, `{"spec":{"owner":"o"}}`, `{"spec":{"owner":"o","engine":"postgres"}}`,
			`{"spec":{"owner":"o"}}`},
		{"list items of the configuration lose their unwritten zeros",
			`{"spec":{"routes":[{"host":"h","port":0},{"host":"","port":1}]}}`,
			`{"spec":{"routes":[{"host":"h"},{"port":1}]}}`, ``,
			`{"spec":{"routes":[{"host":"h"},{"port":1}]}}`},
	} {
		u := mustJSON(t, c.merged)
		var old map[string]any
		if c.old != "" {
			old = mustJSON(t, c.old)
		}
		config := mustJSON(t, c.config)
		dropUnwrittenFields(u, config, old)
		if g := asJSON(t, u); g != asJSON(t, mustJSON(t, c.want)) {
			t.Errorf("%s: got %s, want %s", c.name, g, c.want)
		}
	}
}
