package strategy

import "math/rand/v2"

// Generated names follow kube-apiserver (names.SimpleNameGenerator): the
// base, cut to leave room, and five characters from an alphabet without
// vowels (so no words) and without easily confused characters.
const (
	nameAlphabet     = "bcdfghjklmnpqrstvwxz2456789"
	nameSuffixLength = 5
	maxNameBase      = 63 - nameSuffixLength
	// MaxGenerateNameAttempts is how often create tries another generated
	// name when one is taken before answering 409, as upstream does.
	MaxGenerateNameAttempts = 8
)

// GenerateName returns base with a random suffix.
func GenerateName(base string) string {
	if len(base) > maxNameBase {
		base = base[:maxNameBase]
	}
	b := make([]byte, len(base), len(base)+nameSuffixLength)
	copy(b, base)
	for range nameSuffixLength {
		b = append(b, nameAlphabet[rand.IntN(len(nameAlphabet))])
	}
	return string(b)
}
