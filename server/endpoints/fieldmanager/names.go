package fieldmanager

import (
	"strings"
	"unicode"
	"unicode/utf8"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
)

// ManagerName is who a write is recorded as made by: the fieldManager
// parameter or, without one, the client's User-Agent up to its first "/"
// ("kubectl" for "kubectl/v1.37.1 (linux/amd64) kubernetes/..."), without
// unprintable characters and cut to the 128 bytes a fieldManager may have,
// as kube-apiserver derives it. The field manager records an empty name as
// "unknown".
func ManagerName(fieldManager, userAgent string) string {
	if fieldManager != "" {
		return fieldManager
	}
	prefix, _, _ := strings.Cut(userAgent, "/")
	var b strings.Builder
	for _, r := range prefix {
		if !unicode.IsPrint(r) {
			continue
		}
		if b.Len()+utf8.RuneLen(r) > metav1validation.FieldManagerMaxLength {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}
