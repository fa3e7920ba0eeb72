package endpoints

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// widgetList is a WidgetList as the wire carries it.
type widgetList struct {
	Kind       string          `json:"kind"`
	APIVersion string          `json:"apiVersion"`
	Metadata   metav1.ListMeta `json:"metadata"`
	Items      []widget        `json:"items"`
}

func (e *env) list(t *testing.T, path string) widgetList {
	t.Helper()
	r := e.do("GET", path, "", "")
	if r.code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, r.code, r.body)
	}
	var l widgetList
	decodeJSON(t, r.body, &l)
	return l
}

func TestList(t *testing.T) {
	e := newEnv(t, false)
	ns := widgetsPath + "list/widgets"

	t.Run("empty list", func(t *testing.T) {
		r := e.do("GET", ns, "", "")
		if r.code != 200 || r.header.Get("Content-Type") != "application/json" {
			t.Fatalf("%d %q", r.code, r.header.Get("Content-Type"))
		}
		var raw map[string]json.RawMessage
		decodeJSON(t, r.body, &raw)
		if string(raw["items"]) != "[]" || string(raw["kind"]) != `"WidgetList"` || string(raw["apiVersion"]) != `"storagetest.apiloom.dev/v1"` {
			t.Fatalf("empty list %s", r.body)
		}
		var lm metav1.ListMeta
		decodeJSON(t, raw["metadata"], &lm)
		if rv, err := strconv.ParseInt(lm.ResourceVersion, 10, 64); err != nil || rv <= 0 {
			t.Fatalf("list resourceVersion %q", lm.ResourceVersion)
		}
	})

	for i := range 5 {
		color := "red"
		if i%2 == 1 {
			color = "blue"
		}
		e.createWidget("list", fmt.Sprintf("w%d", i), color, "idx", strconv.Itoa(i), "team", "a")
	}
	e.createWidget("list-b", "w9", "red")

	t.Run("items carry kind and apiVersion", func(t *testing.T) {
		l := e.list(t, ns)
		if l.Kind != "WidgetList" || len(l.Items) != 5 {
			t.Fatalf("list %+v", l)
		}
		for _, it := range l.Items {
			if it.Kind != "Widget" || it.APIVersion != widgetAPI || it.Namespace != "list" {
				t.Fatalf("item %+v", it.TypeMeta)
			}
		}
		if all := e.list(t, "/apis/storagetest.apiloom.dev/v1/widgets"); len(all.Items) != 6 {
			t.Fatalf("all namespaces: %d items", len(all.Items))
		}
	})

	t.Run("pagination", func(t *testing.T) {
		var names []string
		path := ns + "?limit=2"
		first := e.list(t, path)
		if first.Metadata.Continue == "" || first.Metadata.RemainingItemCount == nil || *first.Metadata.RemainingItemCount != 3 {
			t.Fatalf("first page %+v", first.Metadata)
		}
		for l := first; ; {
			for _, it := range l.Items {
				names = append(names, it.Name)
			}
			if l.Metadata.Continue == "" {
				break
			}
			l = e.list(t, ns+"?limit=2&continue="+url.QueryEscape(l.Metadata.Continue))
		}
		if strings.Join(names, ",") != "w0,w1,w2,w3,w4" {
			t.Fatalf("pages gave %v", names)
		}
		e.do("GET", ns+"?limit=1&continue=garbage", "", "").wantStatus(t, 400, metav1.StatusReasonBadRequest, "")
		e.do("GET", ns+"?limit=2&resourceVersion=5&continue="+url.QueryEscape(first.Metadata.Continue), "", "").
			wantStatus(t, 400, metav1.StatusReasonBadRequest, "specifying resource version is not allowed when using continue")
	})

	t.Run("selectors", func(t *testing.T) {
		for _, tc := range []struct {
			query string
			want  int
		}{
			{"labelSelector=idx%3D1", 1},
			{"labelSelector=idx+in+(1,2,3),team%3Da", 3},
			{"labelSelector=idx!%3D0", 4},
			{"labelSelector=!idx", 0},
			{"fieldSelector=metadata.name%3Dw2", 1},
			{"fieldSelector=metadata.namespace%3Dlist", 5},
			{"fieldSelector=spec.color%3Dblue", 2},
			{"fieldSelector=spec.color!%3Dblue,metadata.name!%3Dw0", 2},
		} {
			if l := e.list(t, ns+"?"+tc.query); len(l.Items) != tc.want {
				t.Errorf("%s: %d items, want %d", tc.query, len(l.Items), tc.want)
			}
		}
		e.do("GET", ns+"?fieldSelector=spec.size%3D1", "", "").wantStatus(t, 400, metav1.StatusReasonBadRequest, "field label not supported: spec.size")
		e.do("GET", ns+"?fieldSelector=name", "", "").wantStatus(t, 400, metav1.StatusReasonBadRequest, "")
		e.do("GET", ns+"?labelSelector=a+in+(", "", "").wantStatus(t, 400, metav1.StatusReasonBadRequest, "")
		e.do("GET", gadgetsPath+"?fieldSelector=metadata.namespace%3Dx", "", "").wantStatus(t, 400, metav1.StatusReasonBadRequest, "field label not supported: metadata.namespace")
	})

	t.Run("resourceVersion rules", func(t *testing.T) {
		l := e.list(t, ns)
		if got := e.list(t, ns+"?resourceVersion=0"); len(got.Items) != 5 {
			t.Fatalf("RV=0 gave %d items", len(got.Items))
		}
		if got := e.list(t, ns+"?resourceVersion="+l.Metadata.ResourceVersion+"&resourceVersionMatch=Exact"); got.Metadata.ResourceVersion != l.Metadata.ResourceVersion {
			t.Fatalf("Exact read at %s", got.Metadata.ResourceVersion)
		}
		for _, q := range []string{
			"resourceVersionMatch=Exact",
			"resourceVersion=0&resourceVersionMatch=Exact",
			"resourceVersion=1&resourceVersionMatch=Newest",
			"sendInitialEvents=true",
		} {
			st := e.do("GET", ns+"?"+q, "", "").wantStatus(t, 422, metav1.StatusReasonInvalid, "")
			if st.Details == nil || st.Details.Kind != "ListOptions" || st.Details.Group != "meta.k8s.io" {
				t.Fatalf("%s: details %+v", q, st.Details)
			}
		}
		st := e.do("GET", ns+"?resourceVersion=999999999&resourceVersionMatch=NotOlderThan", "", "").wantStatus(t, 504, metav1.StatusReasonTimeout, "")
		if st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0].Type != metav1.CauseTypeResourceVersionTooLarge || st.Details.Causes[0].Message != "Too large resource version" {
			t.Fatalf("too large: %+v", st.Details)
		}
		e.do("GET", ns+"?resourceVersion=abc", "", "").wantStatus(t, 400, metav1.StatusReasonBadRequest, "")
		e.do("GET", ns+"?limit=ten", "", "").wantStatus(t, 400, metav1.StatusReasonBadRequest, "")
	})

	t.Run("expired exact list", func(t *testing.T) {
		l := e.list(t, ns)
		e.createWidget("list-b", "later", "red")
		e.compact(e.rev())
		e.do("GET", ns+"?resourceVersion="+l.Metadata.ResourceVersion+"&resourceVersionMatch=Exact", "", "").
			wantStatus(t, 410, metav1.StatusReasonExpired, "The resourceVersion for the provided list is too old.")
	})

	t.Run("table", func(t *testing.T) {
		r := e.do("GET", ns+"?limit=3", "", "", "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json")
		var tbl metav1.Table
		decodeJSON(t, r.body, &tbl)
		if tbl.Kind != "Table" || tbl.APIVersion != "meta.k8s.io/v1" || len(tbl.ColumnDefinitions) != 2 || tbl.ColumnDefinitions[0].Name != "Name" ||
			len(tbl.Rows) != 3 || tbl.Continue == "" || tbl.ResourceVersion == "" {
			t.Fatalf("table %s", r.body)
		}
		if tbl.Rows[0].Cells[0] != "w0" || !strings.Contains(string(tbl.Rows[0].Object.Raw), `"kind":"PartialObjectMetadata"`) {
			t.Fatalf("row %s", r.body)
		}
		r = e.do("GET", ns+"?includeObject=Object", "", "", "Accept", "application/json;as=Table;v=v1beta1;g=meta.k8s.io")
		decodeJSON(t, r.body, &tbl)
		if tbl.APIVersion != "meta.k8s.io/v1beta1" || !strings.Contains(string(tbl.Rows[0].Object.Raw), `"kind":"Widget"`) {
			t.Fatalf("includeObject=Object %s", r.body)
		}
		e.do("GET", ns+"?includeObject=All", "", "", "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").wantStatus(t, 400, metav1.StatusReasonBadRequest, "")
	})

	t.Run("partial object metadata", func(t *testing.T) {
		// (The metadata client lists protobuf first: protobuf_test.go.)
		r := e.do("GET", ns, "", "", "Accept", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
		var pl metav1.PartialObjectMetadataList
		decodeJSON(t, r.body, &pl)
		if pl.Kind != "PartialObjectMetadataList" || len(pl.Items) != 5 || pl.Items[0].Kind != "PartialObjectMetadata" || pl.Items[0].Name != "w0" {
			t.Fatalf("partial list %s", r.body)
		}
		e.do("GET", ns, "", "", "Accept", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1").wantStatus(t, 406, metav1.StatusReasonNotAcceptable, "")
		r = e.do("GET", ns+"/w1", "", "", "Accept", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
		var p metav1.PartialObjectMetadata
		decodeJSON(t, r.body, &p)
		if p.Kind != "PartialObjectMetadata" || p.Name != "w1" || p.Labels["idx"] != "1" {
			t.Fatalf("partial %s", r.body)
		}
	})

	t.Run("yaml", func(t *testing.T) {
		r := e.do("GET", ns+"/w1", "", "", "Accept", "application/yaml")
		if r.code != 200 || r.header.Get("Content-Type") != "application/yaml" || !strings.Contains(string(r.body), "kind: Widget\n") {
			t.Fatalf("%d %s", r.code, r.body)
		}
		r = e.do("GET", ns, "", "", "Accept", "application/yaml")
		if r.code != 200 || !strings.Contains(string(r.body), "kind: WidgetList\n") {
			t.Fatalf("%d %s", r.code, r.body)
		}
	})
}
