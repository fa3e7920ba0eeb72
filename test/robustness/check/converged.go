package check

import (
	"sort"
	"strings"

	"github.com/apiloom/apiloom/test/robustness/history"
)

// Converged checks that every informer's final store equals etcd's final
// state under the informer's prefix: no key missing, none extra (a missed
// delete), none at another revision or value (a missed update). Each
// failure names the operations that made the change the informer missed.
func Converged(h history.History, e Etcd) Report {
	r := Report{Checker: "Converged"}
	final := e.final()
	w := indexWriters(h)
	last := map[string]Change{}
	for _, c := range e.Changes {
		last[c.Key] = c
	}
	// opsOf names the writers of key's last change, if etcd's history
	// holds it.
	opsOf := func(key string) []int {
		if c, ok := last[key]; ok {
			return w.of(c, h)
		}
		return nil
	}
	for _, inf := range h.Informers {
		r.Checked++
		keys := map[string]bool{}
		for k := range inf.Items {
			keys[k] = true
		}
		for k := range final {
			if strings.HasPrefix(k, inf.Prefix) {
				keys[k] = true
			}
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			got, have := inf.Items[k]
			want, exists := final[k]
			inPrefix := strings.HasPrefix(k, inf.Prefix)
			f := Failure{Ops: opsOf(k), Key: k}
			switch {
			case have && !inPrefix:
				f.Ops = nil
				r.failf(f, "informer of client %d under %q holds %q, outside its selector", inf.Client, inf.Prefix, k)
			case have && !exists && last[k].Delete:
				f.Rev = last[k].Rev
				r.failf(f, "informer of client %d under %q holds %q (rv %d), which etcd deleted at revision %d",
					inf.Client, inf.Prefix, k, got.RV, last[k].Rev)
			case have && !exists:
				r.failf(f, "informer of client %d under %q holds %q (rv %d), which etcd does not hold", inf.Client, inf.Prefix, k, got.RV)
			case !have && exists:
				f.Rev = want.RV
				r.failf(f, "informer of client %d under %q lacks %q, which etcd holds at revision %d", inf.Client, inf.Prefix, k, want.RV)
			case got.RV != want.RV || got.Value != want.Value:
				f.Rev = want.RV
				r.failf(f, "informer of client %d under %q holds %q at revision %d value %q, etcd at revision %d value %q",
					inf.Client, inf.Prefix, k, got.RV, got.Value, want.RV, want.Value)
			}
		}
	}
	return r
}
