package admissionconf

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
)

// fieldDiff is one place where two observations differ: a JSON path
// ("." for the whole value) and the value each server gave.
type fieldDiff struct {
	path       string
	kas, loom  string // JSON; "null" for absent
	documented string // the exception that explains it, if any
}

func (d fieldDiff) String() string {
	return fmt.Sprintf("%s: kube-apiserver %s, apiloom %s", d.path, d.kas, d.loom)
}

// jsonDiff lists where the JSON documents kas and loom differ, one entry
// a path; documents that do not decode differ as a whole.
func jsonDiff(kas, loom string) []fieldDiff {
	var a, b any
	if json.Unmarshal([]byte(kas), &a) != nil || json.Unmarshal([]byte(loom), &b) != nil {
		return []fieldDiff{{path: ".", kas: kas, loom: loom}}
	}
	var out []fieldDiff
	diffValues("", a, b, &out)
	return out
}

func diffValues(path string, a, b any, out *[]fieldDiff) {
	if reflect.DeepEqual(a, b) {
		return
	}
	ma, okA := a.(map[string]any)
	mb, okB := b.(map[string]any)
	if okA && okB {
		keys := make([]string, 0, len(ma)+len(mb))
		for k := range ma {
			keys = append(keys, k)
		}
		for k := range mb {
			if _, ok := ma[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			diffValues(path+"."+k, ma[k], mb[k], out)
		}
		return
	}
	la, okA := a.([]any)
	lb, okB := b.([]any)
	if okA && okB && len(la) == len(lb) {
		for i := range la {
			diffValues(fmt.Sprintf("%s[%d]", path, i), la[i], lb[i], out)
		}
		return
	}
	if path == "" {
		path = "."
	}
	*out = append(*out, fieldDiff{path: path, kas: show(a), loom: show(b)})
}

// show is v as JSON.
func show(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}
