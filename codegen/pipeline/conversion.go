package pipeline

import (
	"fmt"
	"regexp"
	"strings"
)

const noConversion = "could not find nor generate a final Conversion function for"

// fieldLine is conversion-gen's klog line naming a field that stopped it,
// "E0102 15:04:05.000000   123 conversion.go:795]       - Field".
var fieldLine = regexp.MustCompile(`^\S+\s+\S+\s+\d+ conversion\.go:\d+\]       - (.*)$`)

// missingConversions reads conversion-gen's log and returns, one a line,
// the signature of each conversion it could not write, each followed by
// the fields that stopped it; "" when none is missing.
func missingConversions(log string) string {
	var b strings.Builder
	for _, line := range strings.Split(log, "\n") {
		if _, after, ok := strings.Cut(line, noConversion); ok {
			// "<in import path>.<Type> -> <out import path>.<Type>"
			w := strings.Fields(after)
			if len(w) != 3 {
				continue
			}
			inPkg, inType := pkgType(w[0])
			outPkg, outType := pkgType(w[2])
			fmt.Fprintf(&b, "  func Convert_%s_%s_To_%s_%s(in *%s.%s, out *%s.%s, s conversion.Scope) error\n",
				inPkg, inType, outPkg, outType, inPkg, inType, outPkg, outType)
			continue
		}
		if m := fieldLine.FindStringSubmatch(line); m != nil {
			fmt.Fprintf(&b, "      field %s does not match the peer type\n", m[1])
		}
	}
	return b.String()
}

// pkgType splits "example.com/apis/shop/v1.Order" into "v1" and "Order".
func pkgType(s string) (pkg, typ string) {
	last := s[strings.LastIndex(s, "/")+1:]
	pkg, typ, _ = strings.Cut(last, ".")
	return pkg, typ
}
