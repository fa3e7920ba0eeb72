package negotiation

import (
	"errors"
	"net/http/httptest"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

func TestNegotiate(t *testing.T) {
	table := Output{Target: AsTable, MetaVersion: "v1"}
	for _, tc := range []struct {
		accept string
		stream bool
		want   Output
		fail   bool
	}{
		{accept: "", want: Output{}},
		{accept: "*/*", want: Output{}},
		{accept: "application/*", want: Output{}},
		{accept: "application/json", want: Output{}},
		{accept: "application/json; charset=utf-8", want: Output{}},
		{accept: "application/vnd.kubernetes.protobuf, application/json", want: Output{}},
		{accept: "application/json;stream=watch", stream: true, want: Output{}},
		{accept: "application/yaml", want: Output{Encoding: YAML}},
		{accept: "application/yaml", stream: true, fail: true},
		{accept: "application/vnd.kubernetes.protobuf", fail: true},
		// A kind without protobuf methods still has its partial views in
		// protobuf (the metadata client asks for them first).
		{accept: "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json", want: Output{Encoding: Protobuf, Target: AsPartialList, MetaVersion: "v1"}},
		{accept: "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1", fail: true},
		{accept: "text/html", fail: true},
		{accept: "application/json;q=0", fail: true},
		{accept: "application/yaml;q=0.5, application/json", want: Output{}},
		{accept: "application/json;q=0.5, application/yaml", want: Output{Encoding: YAML}},
		// kubectl get
		{accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json", want: table},
		{accept: "application/json;as=Table;v=v1beta1;g=meta.k8s.io", want: Output{Target: AsTable, MetaVersion: "v1beta1"}},
		{accept: "application/json;as=Table;v=v2;g=meta.k8s.io,application/json", want: Output{}},
		{accept: "application/json;as=Table;v=v1;g=other.io", fail: true},
		{accept: "application/json;as=Nope;v=v1;g=meta.k8s.io", fail: true},
		{accept: "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", want: Output{Target: AsPartialList, MetaVersion: "v1"}},
		{accept: "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io", stream: true, want: Output{Target: AsPartial, MetaVersion: "v1"}},
		{accept: "application/json;stream=other", stream: true, fail: true},
		{accept: "garbage;;;", fail: true},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if tc.accept != "" {
			r.Header.Set("Accept", tc.accept)
		}
		got, err := negotiateMedia(r, tc.stream, Formats{CBOR: true})
		if tc.fail {
			if err == nil || code(err) != 406 {
				t.Errorf("%q (stream %v): %+v, %v; want 406", tc.accept, tc.stream, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q (stream %v): %+v, %v; want %+v", tc.accept, tc.stream, got, err, tc.want)
		}
	}
}

// code is the HTTP code of an API error, 0 for anything else.
func code(err error) int32 {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return st.Status().Code
	}
	return 0
}
