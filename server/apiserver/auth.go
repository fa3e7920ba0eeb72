package apiserver

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
)

// loadOrCreateToken returns the loopback bearer token kept in dataDir
// (user system:apiserver in system:masters: the server's own controllers,
// testserver's admin Config), creating it on first start so that a
// restarted server keeps it.
func loadOrCreateToken(o *Options) (string, error) {
	path := o.path("admin-token")
	if b, err := os.ReadFile(path); err == nil {
		if tok := strings.TrimSpace(string(b)); tok != "" {
			return tok, nil
		}
	}
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(buf)
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write admin token: %w", err)
	}
	return tok, nil
}
