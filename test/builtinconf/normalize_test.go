package builtinconf

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// A normalizer turns one case's answers into what two servers can agree
// on, and the table's placeholders into this run's values. Uids,
// resourceVersions and generated names become {uidN}, {rvN} and {genN},
// numbered in order of first appearance within the case, so that their
// relations (the same object, an unchanged or a changed version) are
// compared while their values are not; the case's namespace and the run's
// id become {ns} and {run}; times the server sets become {time}; a list's
// own resourceVersion (etcd's revision, moved by every write anywhere)
// becomes {listrv}.
type normalizer struct {
	ns, run string
	// uids, rvs and gens map a value an answer carried to its placeholder.
	uids, rvs, gens map[string]string
}

func newNormalizer(ns, run string) *normalizer {
	return &normalizer{ns: ns, run: run, uids: map[string]string{}, rvs: map[string]string{}, gens: map[string]string{}}
}

// timeKeys are the fields whose values are times the server chooses.
var timeKeys = map[string]bool{"creationTimestamp": true, "deletionTimestamp": true, "time": true, "lastTransitionTime": true}

// number is a run of digits in a message: a resourceVersion if one is known.
var number = regexp.MustCompile(`\b[0-9]+\b`)

// generated remembers a name the server generated.
func (n *normalizer) generated(name string) {
	if _, ok := n.gens[name]; !ok {
		n.gens[name] = fmt.Sprintf("{gen%d}", len(n.gens)+1)
	}
}

// expand replaces the placeholders in every string of s with this run's values.
func (n *normalizer) expand(s Step) (Step, error) {
	pairs := []string{"{ns}", n.ns, "{run}", n.run}
	for _, m := range []map[string]string{n.uids, n.rvs, n.gens} {
		for actual, ph := range m {
			pairs = append(pairs, ph, actual)
		}
	}
	data, err := json.Marshal(s)
	if err != nil {
		return Step{}, err
	}
	data = []byte(strings.NewReplacer(pairs...).Replace(string(data)))
	var out Step
	if err := json.Unmarshal(data, &out); err != nil {
		return Step{}, err
	}
	if strings.Contains(string(data), "{uid") || strings.Contains(string(data), "{rv") || strings.Contains(string(data), "{gen") {
		return Step{}, fmt.Errorf("a placeholder no earlier answer gave: %s", data)
	}
	return out, nil
}

// body normalises an answer's JSON.
func (n *normalizer) body(data []byte) (any, error) {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("answer is not JSON: %w: %q", err, data)
	}
	isList := false
	if m, ok := v.(map[string]any); ok {
		k, _ := m["kind"].(string)
		isList = strings.HasSuffix(k, "List")
	}
	n.collect(v, "", isList)
	return n.rewrite(v, "", isList), nil
}

// sortedKeys are m's keys in order, so placeholders are numbered the same
// way on every run.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// collect gives every uid and resourceVersion in v a placeholder. top is
// whether v is a list's own metadata's parent.
func (n *normalizer) collect(v any, key string, listTop bool) {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(v) {
			e := v[k]
			s, isString := e.(string)
			switch {
			case k == "uid" && isString && s != "":
				if _, ok := n.uids[s]; !ok {
					n.uids[s] = fmt.Sprintf("{uid%d}", len(n.uids)+1)
				}
			case k == "resourceVersion" && isString && s != "" && !(listTop && key == "metadata"):
				if _, ok := n.rvs[s]; !ok {
					n.rvs[s] = fmt.Sprintf("{rv%d}", len(n.rvs)+1)
				}
			default:
				n.collect(e, k, listTop && key == "" && k == "metadata")
			}
		}
	case []any:
		for _, e := range v {
			n.collect(e, key, false)
		}
	}
}

// rewrite replaces what differs between servers and runs in v.
func (n *normalizer) rewrite(v any, key string, listTop bool) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			s, isString := e.(string)
			switch {
			case k == "uid" && isString && n.uids[s] != "":
				v[k] = n.uids[s]
			case k == "resourceVersion" && isString && s != "" && listTop && key == "metadata":
				v[k] = "{listrv}"
			case k == "resourceVersion" && isString && n.rvs[s] != "":
				v[k] = n.rvs[s]
			case timeKeys[k] && isString && s != "":
				v[k] = "{time}"
			case k == "serverAddress" && isString:
				v[k] = "{address}"
			default:
				v[k] = n.rewrite(e, k, listTop && key == "" && k == "metadata")
			}
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = n.rewrite(e, key, false)
		}
		if key == "managedFields" {
			slices.SortStableFunc(v, func(a, b any) int {
				am, _ := a.(map[string]any)
				bm, _ := b.(map[string]any)
				for _, f := range []string{"manager", "operation", "subresource", "apiVersion"} {
					if c := cmp.Compare(fmt.Sprint(am[f]), fmt.Sprint(bm[f])); c != 0 {
						return c
					}
				}
				return 0
			})
		}
		return v
	case string:
		return n.text(v, key)
	}
	return v
}

// text replaces this run's values in a string: the namespace, the run's
// id, generated names and uids anywhere; in a message, a number that is a
// known resourceVersion.
func (n *normalizer) text(s, key string) string {
	pairs := []string{n.ns, "{ns}", n.run, "{run}"}
	for _, m := range []map[string]string{n.gens, n.uids} {
		for actual, ph := range m {
			pairs = append(pairs, actual, ph)
		}
	}
	s = strings.NewReplacer(pairs...).Replace(s)
	if key == "message" {
		s = number.ReplaceAllStringFunc(s, func(d string) string {
			if ph, ok := n.rvs[d]; ok {
				return ph
			}
			return d
		})
	}
	return s
}
