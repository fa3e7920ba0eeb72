package endpoints

import (
	"net/http/httptest"
	"testing"
)

func TestNegotiate(t *testing.T) {
	table := output{target: asTable, metaVersion: "v1"}
	for _, tc := range []struct {
		accept string
		stream bool
		want   output
		fail   bool
	}{
		{accept: "", want: output{}},
		{accept: "*/*", want: output{}},
		{accept: "application/*", want: output{}},
		{accept: "application/json", want: output{}},
		{accept: "application/json; charset=utf-8", want: output{}},
		{accept: "application/vnd.kubernetes.protobuf, application/json", want: output{}},
		{accept: "application/json;stream=watch", stream: true, want: output{}},
		{accept: "application/yaml", want: output{enc: encYAML}},
		{accept: "application/yaml", stream: true, fail: true},
		{accept: "application/vnd.kubernetes.protobuf", fail: true},
		// A kind without protobuf methods still has its partial views in
		// protobuf (the metadata client asks for them first).
		{accept: "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json", want: output{enc: encProtobuf, target: asPartialList, metaVersion: "v1"}},
		{accept: "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1", fail: true},
		{accept: "text/html", fail: true},
		{accept: "application/json;q=0", fail: true},
		{accept: "application/yaml;q=0.5, application/json", want: output{}},
		{accept: "application/json;q=0.5, application/yaml", want: output{enc: encYAML}},
		// kubectl get
		{accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json", want: table},
		{accept: "application/json;as=Table;v=v1beta1;g=meta.k8s.io", want: output{target: asTable, metaVersion: "v1beta1"}},
		{accept: "application/json;as=Table;v=v2;g=meta.k8s.io,application/json", want: output{}},
		{accept: "application/json;as=Table;v=v1;g=other.io", fail: true},
		{accept: "application/json;as=Nope;v=v1;g=meta.k8s.io", fail: true},
		{accept: "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", want: output{target: asPartialList, metaVersion: "v1"}},
		{accept: "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io", stream: true, want: output{target: asPartial, metaVersion: "v1"}},
		{accept: "application/json;stream=other", stream: true, fail: true},
		{accept: "garbage;;;", fail: true},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if tc.accept != "" {
			r.Header.Set("Accept", tc.accept)
		}
		got, err := negotiateMedia(r, tc.stream, formats{cbor: true})
		if tc.fail {
			if err == nil || toStatus(err).Code != 406 {
				t.Errorf("%q (stream %v): %+v, %v; want 406", tc.accept, tc.stream, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q (stream %v): %+v, %v; want %+v", tc.accept, tc.stream, got, err, tc.want)
		}
	}
}
