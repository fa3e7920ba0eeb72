package request

import (
	"errors"
	"net/url"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// wantClientError fails unless err is an API error with a 4xx code: bad
// input must never be a 500 or a panic.
func wantClientError(t *testing.T, what string, err error) {
	t.Helper()
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		t.Fatalf("%s: %v is not a Status", what, err)
	}
	if s := st.Status(); s.Code < 400 || s.Code > 499 || s.Reason == "" || s.Message == "" {
		t.Fatalf("%s: %d %s %q, want a 4xx Status", what, s.Code, s.Reason, s.Message)
	}
}

// FuzzQueryOptions feeds arbitrary query strings to the parsing of list,
// watch, table, delete and write options.
func FuzzQueryOptions(f *testing.F) {
	for _, s := range []string{
		"", "watch=true&resourceVersion=0", "labelSelector=a%3Db,c+in+(x,y),!d&fieldSelector=metadata.name%3Dx",
		"fieldSelector=spec.color!%3Dred,metadata.namespace%3D%5C%3D", "limit=500&continue=abc", "resourceVersionMatch=Exact&resourceVersion=5",
		"watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=300",
		"labelSelector=a+in+(", "limit=-1", "timeoutSeconds=x", "fieldSelector=a%3D%3D%3Db",
		"includeObject=Object", "gracePeriodSeconds=x&orphanDependents=true&propagationPolicy=Orphan", "dryRun=All&fieldValidation=Strict&force=true",
	} {
		f.Add(s)
	}
	keys := map[string]bool{"metadata.name": true, "metadata.namespace": true, "spec.color": true}
	f.Fuzz(func(t *testing.T, query string) {
		q, _ := url.ParseQuery(query)
		for _, sel := range []SelectableFields{{Keys: keys}, {Keys: keys, MetadataOnly: true}} {
			for _, name := range []string{"", "x"} {
				if _, err := ParseList(q, "ns", name, sel); err != nil {
					wantClientError(t, "list options "+query, err)
				}
			}
		}
		if _, err := TableOptions(q); err != nil {
			wantClientError(t, "table options "+query, err)
		}
		if _, err := DeleteQueryOptions(q); err != nil {
			wantClientError(t, "delete options "+query, err)
		}
		for _, parse := range []func(url.Values) (WriteOptions, error){ParseCreateOptions, ParseUpdateOptions} {
			if _, err := parse(q); err != nil {
				wantClientError(t, "write options "+query, err)
			}
		}
	})
}
