package pipeline

import "testing"

func TestMissingConversions(t *testing.T) {
	log := `I0102 15:04:05.000000   123 conversion.go:300] considering pairs
E0102 15:04:05.000000   123 conversion.go:792] Warning: could not find nor generate a final Conversion function for example.com/shop/apis/shop/v2.OrderSpec -> example.com/shop/apis/shop/v1.OrderSpec
E0102 15:04:05.000000   123 conversion.go:795]       - Total
E0102 15:04:05.000000   123 conversion.go:795]       - Lines
`
	want := `  func Convert_v2_OrderSpec_To_v1_OrderSpec(in *v2.OrderSpec, out *v1.OrderSpec, s conversion.Scope) error
      field Total does not match the peer type
      field Lines does not match the peer type
`
	if got := missingConversions(log); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if got := missingConversions("I0102 15:04:05.000000   123 conversion.go:300] all fine\n"); got != "" {
		t.Fatalf("nothing missing, got %q", got)
	}
}
